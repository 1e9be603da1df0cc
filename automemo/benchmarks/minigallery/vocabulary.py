"""The words Mini-Gallery conversations and questions are made of.

Statements and questions about the same fact use different wordings on purpose (paraphrase), and
filler lines reuse the relatives' names, so that a retriever matching surface words or names alone
picks up distractors. Each entry is a format string; the generator picks variants with its seeded
random generator, in list order, so editing a list changes the data of every seed.
"""

USER_NAMES = (
    "Maya", "Leo", "Aisha", "Ben", "Clara", "Dev", "Elif", "Finn",
    "Gwen", "Hugo", "Iris", "Jun", "Kira", "Luca", "Nora", "Omar",
)
RELATIVE_NAMES = (
    "Lena", "Tom", "Priya", "Jonas", "Mei", "Rafa", "Sofia", "Diego",
    "Hana", "Felix", "Ines", "Raj", "Greta", "Kofi", "Yara", "Nils",
)
RELATIONS = (
    "sister", "brother", "cousin", "neighbour", "colleague",
    "best friend", "aunt", "uncle", "roommate", "grandmother",
)
JOBS = (
    "pharmacist", "architect", "firefighter", "librarian", "veterinarian", "pilot",
    "baker", "translator", "electrician", "journalist", "florist", "carpenter",
)
CITIES = (
    "Porto", "Lyon", "Krakow", "Osaka", "Valencia", "Tallinn",
    "Denver", "Bergen", "Seville", "Galway", "Ljubljana", "Halifax",
)

JOB_STATEMENTS = (
    "My {rel} {name} just started working as a {value}, what a change!",
    "Big news: {name}, my {rel}, landed a position as a {value}.",
    "{name} (my {rel}) has been a {value} for a few months now and still loves it.",
)
JOB_QUESTIONS = (
    "What does my {rel} do for a living?",
    "Remind me, what is {name}'s profession?",
    "What line of work is my {rel} in?",
)
CITY_STATEMENTS = (
    "My {rel} {name} packed everything up and moved to {value}.",
    "{name}, my {rel}, now lives in {value}: new flat, new life.",
    "Got a postcard from {name}; my {rel} has settled in {value} for good.",
)
CITY_QUESTIONS = (
    "Where does my {rel} live these days?",
    "Which city did {name} relocate to?",
    "In what city is my {rel} based now?",
)
MR_JOB_QUESTIONS = (
    "What do my {rel0} and my {rel1} do for work?",
    "Which jobs do {name0} and {name1} have?",
)
MR_CITY_QUESTIONS = (
    "Which cities do my {rel0} and my {rel1} live in?",
    "Where are {name0} and {name1} living now?",
)

# (answer name, statement): the statement says what happened; the session's time says when.
EVENTS = (
    ("pottery class", "Spent the evening throwing clay at a pottery class; my bowl came out lopsided."),
    ("jazz concert", "Went to a jazz concert downtown tonight, the saxophonist was incredible."),
    ("cooking workshop", "Did a cooking workshop today and learned to make fresh pasta."),
    ("museum tour", "Took a guided museum tour this afternoon, so many old maps."),
    ("camping trip", "Just back from a camping trip by the lake, so many mosquitoes."),
    ("salsa lesson", "Had my first salsa lesson today, I stepped on everyone's toes."),
    ("half marathon", "Ran a half marathon this morning, my legs are jelly."),
    ("wine tasting", "Went to a wine tasting with friends, I still can't tell the reds apart."),
)
TR_ORDER_QUESTIONS = (
    "Which came first: the {e0} or the {e1}?",
    "Did the {e0} or the {e1} happen earlier?",
)
TR_DATE_QUESTIONS = (
    "On what date did I go to the {e}?",
    "When exactly was the {e} I attended?",
)

PHOTO_CONTEXTS = (
    "flea market stall", "balcony", "birthday party", "hotel lobby", "office desk",
    "garden shed", "bakery window", "train station", "farmers market", "art fair",
    "school fete", "harbour", "library reading room", "toy shop",
)
PHOTO_STATEMENTS = (
    "Snapped this at the {ctx} today.",
    "Look at what I saw at the {ctx}!",
    "A picture from the {ctx}, thought you'd like it.",
)
FILLER_PHOTO_STATEMENTS = (
    "Random picture from my walk, no idea why I took it.",
    "Found this old photo on my phone.",
)
VS_TEXT_QUESTIONS = (
    "Which of my photos showed {colour} {kinds}?",
    "In which pictures did I show you {colour} {kinds}?",
)
VS_IMAGE_QUESTIONS = (
    "Which of the photos I shared shows the same kind of thing as this picture?",
    "I shared a photo of something like this before. Which one was it?",
)
VR_COUNT_QUESTIONS = (
    "How many objects were in the picture I took at the {ctx}?",
    "Count the shapes in my photo from the {ctx}: how many were there?",
)
VR_COLOUR_QUESTIONS = (
    "What colour were the shapes in my picture from the {ctx}?",
)
VR_PATTERN_QUESTIONS = (
    "What pattern was on the shapes in the {ctx} photo?",
)

TTL_NAMES = (
    "zorbel", "quimp", "flarn", "snib", "droove", "wompet",
    "glarp", "trindle", "vexel", "plonk", "brisket", "mopple",
)
TTL_FIRST = "My niece invented a word: she calls things like this a {name}."
TTL_MORE = (
    "Found another {name} today!",
    "Here's one more {name} for the collection.",
    "Pretty sure this one counts as a {name} too.",
)
TTL_QUESTIONS = (
    "What did my niece call things like the one in this picture?",
    "Which of my niece's made-up words fits the thing in this picture?",
)

# Knowledge that changes: (topic as asked, statement, correction, question, values).
CHANGING_FACTS = (
    (
        "my dentist appointment",
        "My dentist appointment is on {value}.",
        "Change of plans: the dentist moved my appointment to {value}.",
        "Which day is my dentist appointment?",
        ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    ),
    (
        "the car I'm buying",
        "I'm buying the {value} hatchback from the dealer down the road.",
        "Actually I switched and went for the {value} one instead.",
        "What colour is the car I'm getting?",
        ("silver", "navy", "white", "olive", "maroon"),
    ),
    (
        "my yoga class",
        "My yoga class is on {value} evenings.",
        "The studio moved yoga to {value} evenings now.",
        "On which evening do I have yoga?",
        ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    ),
)
# Knowledge stated twice, consistently: (topic as asked, first, restatement, values).
STABLE_FACTS = (
    (
        "my favourite dish",
        "My favourite dish is {value}, I could eat it every day.",
        "Had {value} again tonight: still my favourite, nothing beats it.",
        ("ramen", "paella", "lasagna", "pho", "moussaka"),
    ),
    (
        "my morning drink",
        "I always start the day with {value}.",
        "Another morning, another cup of {value}, as always.",
        ("green tea", "black coffee", "hot chocolate", "chai"),
    ),
)
CD_QUESTIONS = (
    "Have I told you conflicting things about {topic}?",
    "Did I contradict myself at any point about {topic}?",
)

AR_QUESTIONS = (
    "What does my {rel} do for a living?",
    "Which city does my {rel} live in?",
    "What did my {rel} name their dog?",
    "What colour were the shapes in my photo from the {ctx}?",
)

USER_FILLERS = (
    "Work was hectic today, three meetings back to back.",
    "{name} called me yesterday and we chatted for ages.",
    "It rained all day, so I stayed in and read.",
    "Thinking about repainting the kitchen, maybe a lighter shade.",
    "I finally fixed the squeaky door hinge.",
    "Had lunch with {name}, nothing special, just sandwiches.",
    "My phone battery keeps dying, might need a new one.",
    "Watched a documentary about octopuses last night.",
    "The kids next door were playing football outside all afternoon.",
    "I'm trying to drink more water this month.",
    "{name} sent me a funny video, I can't stop laughing.",
    "Traffic was terrible on the way home.",
    "I keep forgetting to water the plants.",
    "{name} wants to plan a trip together sometime.",
)
ASSISTANT_REPLIES = (
    "That sounds lovely!",
    "Thanks for telling me, I'll keep it in mind.",
    "Oh nice, how did it go?",
    "Interesting! Tell me more.",
    "Good to know.",
    "Ha, I can picture that.",
    "That's great news!",
    "Noted.",
)
NOT_MENTIONED = "Not mentioned"
