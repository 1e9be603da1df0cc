# The discovered default memo program (automemo/programs.py: `discovered`). Written by
# `automemo bench discovered-default`; do not edit by hand, run it again.
# --- provenance ---
# what: "the discovered default: found by automemo's own search on the labelled questions of the embedded sample's train conversations; not a hand design"
# data: "@mem-gallery-sample"
# data_sha256: "d832d46d8eb661461525e3d7d19e9f425a67f0b2a23118c7b8b57e727203ba84"
# chosen_on: "the five train conversations of --preset memgallery-sample (their labelled questions); the five test conversations were read only for the test figures below"
# command: "automemo bench discovered-default --draws=3 --steps=20"
# commit: "e43ca1faf421fdb5356402f78ca2342e816e903e+dirty"
# date: "2026-12-05"
# draws: 3
# steps: 20
# candidates: 8
# chosen: {"draw": 1, "node": 13, "summary": "tune stage passages (PASSAGE_LENGTH 8, PASSAGE_TOP 4, PASSAGE_WEIGHT 0.585)"}
# leader: {"draw": 1, "node": 17, "summary": "perturb PASSAGE_TOP 3\u21921, SESSION_WEIGHT 0.0\u21920.3455"}
# validation: 0.895045
# validation_lead_by_conversation: {"AI_Robotics_Automation_Future_Tech": 0.114529, "Architecture_Art_Culture_Exhibition_Technology": 0.088948, "Baking_Dessert_Daily_Life_Skill": 0.058985, "Home_Repair_Maintenance_Cleaning": 0.076344, "Music_Dance_Theater_Performance_Learning": 0.084991}
# validation_lead: 0.084759
# validation_lead_se: 0.009053
# hand_design: "seed hybrid_rag (sweep)"
# hand_design_validation: 0.814738
# test_metric: "recall@10"
# test: 0.881169
# test_hand_design: 0.821343
# test_lead: 0.059826
# test_lead_se: 0.01307
# test_questions: 350
# cost: {"discovered": {"ingest_cpu_ms_per_turn": 46.5047, "recall_cpu_ms": 11.1414, "recall_p95_ms": 9.4608}, "hand_design": {"ingest_cpu_ms_per_turn": 15.5754, "recall_cpu_ms": 7.2397, "recall_p95_ms": 2.1044}}
# --- end of provenance ---

"""A composed memory: a recipe of memolib components (written by the offline generator).

Encode: each episode becomes units of UNIT granularity: "turn" (a dialogue round or web step),
"window" (a turn indexed together with the text of the turns beside it, citing itself), "multi"
(each turn indexed twice, alone and with its neighbours: two views whose rankings are fused), or
"session" (the whole episode). Store: the units go into a BM25 index and/or a dense index
(MiniLM) per view, as the settings below need; SCOPE "user" keeps one memory per user.
Retrieve: the question is searched in the indexes INDEXES names, DEPTH candidates each ("lazy":
BM25's DEPTH candidates, embedded only then, each unit once, and ranked by cosine: remembering
costs what BM25 costs, a recall pays for the candidates it embeds; with no dense index left, the
ranker's dense signals embed only its pool too); two
rankings are fused by reciprocal rank (RRF_K) or by weighted normalised scores (DENSE_WEIGHT);
RECENCY > 0 mixes in how late a unit came; MMR reorders the hits for diversity (MMR_LAMBDA);
WINDOW > 0 follows each hit with its neighbouring turns; IMAGES searches image units too (each
image a unit of its own, its caption and round, cited by the image id).
Further rankings join the fusion when switched on: LATE reranks the fused candidates by MaxSim
over MiniLM's token embeddings (ColBERT-style late interaction) and fuses that order with
theirs (LATE_WEIGHT its share); SESSIONS > 0 ranks whole sessions and then the turns inside the
best SESSIONS of them; ENTITIES ranks the units holding the question's names and quoted phrases
whole; FEEDBACK searches BM25 again with the first hits' terms (RM3). After fusion, TEMPORAL
moves up units dated near the date a time question asks about (relative dates like "yesterday"
resolved against each session's date); SPEAKERS moves up the turns of a speaker the question
names. RANK orders the candidates by the ranker fitted on the train split (RANKER: its "model" is
"linear", weights of a pairwise linear model over every ranking's signals, memolib.LinearRanker,
"trees", LambdaMART's boosted trees over them, memolib.TreeRanker, or "blend", both); the order
the stages above made is one of its signals ("fused") and brings its best candidates into the
ranker's pool, so those stages still count; the earlier order follows the ranked pool.
Each of the next three is "off", "text" (when the question's wording asks for it) or "always":
LATEST moves, for a question about a current or final value, the latest round of a best hit's
session that states it too (a score within LATEST_FLOOR of the hit's) just ahead of that hit; COVERAGE lets no session take more than COVERAGE_QUOTA
payload slots for a counting or series question; LISTING follows the two best hits of a list
question with their session's rounds, LISTING_RADIUS each way.
Session-level stages: PASSAGES indexes, as documents of their own beside the turns, each whole
session ("session"), each window of PASSAGE_LENGTH turns ("window", half overlapping) or each
session's extractive summary ("summary": its PASSAGE_LENGTH most salient sentences and heaviest
terms by tf-idf within the conversation, no model); a passage cannot be cited itself, so each of
the PASSAGE_TOP best stands for its best turn (the turns of those passages searched again), and
that ranking of turns is fused by reciprocal rank with the order the turn rankings made
(PASSAGE_WEIGHT its weight there). SESSION_WEIGHT > 0 mixes each hit's score with its session's
(BM25 over the session's text); SESSION_SPREAD > 0 puts the best turn of each of the best
SESSION_SPREAD sessions first, then the rest.
Manage: the payload shows PAYLOAD_UNITS units in chronological order and cites them best first.

With ROUTER set, a question router fitted on the train split's questions predicts the question's
type from its text alone, and ROUTES gives that predicted type its own retrieve settings
(changes to the defaults below). A train question asked in its own conversation gets the type a
router fitted without that conversation predicted (ROUTER's "held_out" table: cross-fitting, so
the search's score is not that of a router that saw those questions); every other question, a
deployed user's included, is routed by the router fitted on all train questions. RANKER is
cross-fitted the same way: a train conversation's questions are scored with the weights of the
fold fitted without it ("folds", "fold_of"), every other question with "weights". The constants are the recipe; edit them, or the code, freely.
"""

from automemo.contract import MemoProgram
from automemo.toolkit import memolib

UNIT = "multi"  # tunable: choice turn|window|multi|session
SCOPE = "user"  # tunable: choice user|all
INDEXES = "both"  # tunable: choice bm25|dense|both|lazy
FUSION = "rrf"  # tunable: choice rrf|weighted
RRF_K = 60  # tunable: int 1..100
DENSE_WEIGHT = 0.5  # tunable: float 0.0..1.0
DEPTH = 30  # tunable: int 10..100
WINDOW = 0  # tunable: int 0..3
MMR = False  # tunable: bool
MMR_LAMBDA = 0.7  # tunable: float 0.3..1.0
RECENCY = 0.0  # tunable: float 0.0..1.0
PAYLOAD_UNITS = 10  # tunable: int 3..30
IMAGES = False  # tunable: bool
LATE = False  # tunable: bool
LATE_WEIGHT = 2.0  # tunable: float 0.5..4.0
ENTITIES = False  # tunable: bool
SESSIONS = 0  # tunable: int 0..5
FEEDBACK = False  # tunable: bool
TEMPORAL = False  # tunable: bool
SPEAKERS = False  # tunable: bool
RANK = True  # tunable: bool
LATEST = "off"  # tunable: choice off|text|always
LATEST_FLOOR = 0.5  # tunable: float 0.1..0.9
COVERAGE = "off"  # tunable: choice off|text|always
COVERAGE_QUOTA = 3  # tunable: int 1..5
LISTING = "off"  # tunable: choice off|text|always
LISTING_RADIUS = 2  # tunable: int 1..4
PASSAGES = "off"  # tunable: choice off|session|window|summary
PASSAGE_LENGTH = 8  # tunable: int 1..12
PASSAGE_TOP = 4  # tunable: int 1..10
PASSAGE_WEIGHT = 0.585  # tunable: float 0.05..2.0
SESSION_WEIGHT = 0.0  # tunable: float 0.0..0.9
SESSION_SPREAD = 0  # tunable: int 0..10
ROUTES = {}

DEFAULTS = {"indexes": INDEXES, "fusion": FUSION, "rrf_k": RRF_K, "dense_weight": DENSE_WEIGHT,
            "depth": DEPTH, "window": WINDOW, "mmr": MMR, "mmr_lambda": MMR_LAMBDA, "recency": RECENCY,
            "images": IMAGES, "late": LATE, "late_weight": LATE_WEIGHT, "entities": ENTITIES, "sessions": SESSIONS, "feedback": FEEDBACK,
            "temporal": TEMPORAL, "speakers": SPEAKERS, "rank": RANK, "latest": LATEST, "latest_floor": LATEST_FLOOR,
            "coverage": COVERAGE, "coverage_quota": COVERAGE_QUOTA, "listing": LISTING, "listing_radius": LISTING_RADIUS,
            "passages": PASSAGES, "passage_length": PASSAGE_LENGTH, "passage_top": PASSAGE_TOP,
            "passage_weight": PASSAGE_WEIGHT,
            "session_weight": SESSION_WEIGHT, "session_spread": SESSION_SPREAD}
SETTINGS = [DEFAULTS, *({**DEFAULTS, **changes} for changes in ROUTES.values())]
NEEDS_BM25 = any(s["indexes"] in ("bm25", "both", "lazy") or s["feedback"] for s in SETTINGS)
NEEDS_LAZY = any(s["indexes"] == "lazy" for s in SETTINGS)
NEEDS_DENSE = any(s["indexes"] in ("dense", "both") or s["mmr"] for s in SETTINGS)
LAZY_SIGNALS = NEEDS_LAZY and not NEEDS_DENSE  # no dense index at update: the ranker's dense signals embed only its pool
NEEDS_IMAGES = any(s["images"] for s in SETTINGS)
NEEDS_TOKENS = any(s["late"] for s in SETTINGS)
NEEDS_PHRASES = any(s["entities"] for s in SETTINGS)
NEEDS_SESSIONS = any(s["sessions"] > 0 or s["session_weight"] > 0 for s in SETTINGS)
NEEDS_DATES = any(s["temporal"] for s in SETTINGS)
VIEWS = 2 if UNIT == "multi" else 1


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        dim = toolkit.embedding_dims()["text"]
        self.lexical = [memolib.BM25Index() for _ in range(VIEWS)] if NEEDS_BM25 else []
        self.dense = [memolib.DenseIndex(toolkit.embed_text, dim, vector_index=toolkit.vector_index) for _ in range(VIEWS)] if NEEDS_DENSE else []
        self.lazy = [memolib.LazyDense(toolkit.embed_text) for _ in range(VIEWS)] if NEEDS_LAZY else []
        self.tokens = memolib.TokenIndex(toolkit.embed_tokens) if NEEDS_TOKENS else None
        self.phrases = memolib.PhraseIndex() if NEEDS_PHRASES else None
        self.sessions = memolib.SessionIndex() if NEEDS_SESSIONS else None
        self.dates = memolib.DateIndex() if NEEDS_DATES else None
        self.passages = {key: memolib.PassageIndex(passage_indexes(toolkit, dim), *key)  # one per (kind, length) searched
                         for key in dict.fromkeys(passage_key(s) for s in SETTINGS if s["passages"] != "off")}
        self.router = memolib.QuestionRouter.from_params(ROUTER) if ROUTER else None
        ranks = RANKER is not None and any(s["rank"] for s in SETTINGS)  # RANKER is set at the end
        self.ranker = memolib.ranker_from_params(RANKER) if ranks else None
        self.signals = memolib.RankingSignals(toolkit.embed_text, dim, toolkit.embed_tokens if self.ranker.late else None,
                                              vector_index=toolkit.vector_index, lazy=LAZY_SIGNALS) if ranks else None
        self.store = memolib.UnitStore()  # the units by row, as every index numbers them

    def update(self, episode):
        turns = memolib.episode_units(episode)
        if UNIT == "session":
            turns = [memolib.session(episode)] if episode.steps else turns
        views = {"window": [memolib.windows(turns, 1)], "multi": [turns, memolib.windows(turns, 1)]}.get(UNIT, [turns])
        pictures = memolib.image_units(memolib.episode_units(episode)) if NEEDS_IMAGES else []
        for view, view_units in enumerate(views):
            texts = [memolib.indexed_text(episode, u) for u in [*view_units, *pictures]]
            for index in ([self.lexical[view]] if self.lexical else []) + ([self.dense[view]] if self.dense else []) + \
                    ([self.lazy[view]] if self.lazy else []):
                index.add_many(texts)
        # The indexes below hold one row per stored unit (turns, then pictures), like the store.
        stored = [*turns, *pictures]
        texts = [memolib.indexed_text(episode, u) for u in stored]
        if self.tokens is not None:
            self.tokens.add_many(texts)
        if self.phrases is not None:
            self.phrases.add_many(texts)
        if self.dates is not None:
            self.dates.add_many(texts, [u.time for u in stored])
        rows = self.store.add_episode(stored)
        self.store.tag(rows[len(turns):], "image")  # image units: searched only where a setting says IMAGES
        if self.sessions is not None and turns:
            self.sessions.add("\n".join(texts[:len(turns)]), rows[:len(turns)], memolib.scope_of(episode))
        for passages in self.passages.values():
            passages.add(texts[:len(turns)], rows[:len(turns)], memolib.scope_of(episode))
        if self.signals is not None:
            self.signals.add(episode, stored, len(turns), rows)

    def retrieve(self, task):
        budget = memolib.budget_of(task)
        question = task.instruction
        qtype = self.router.predict(task.instruction, memolib.scope_of(task)) if self.router is not None else ""
        settings = {**DEFAULTS, **ROUTES.get(qtype, {})}
        query = memolib.query_text(task)
        scope = memolib.scope_of(task) if SCOPE == "user" else ""
        allowed = self.store.allowed_rows(scope, without=None if settings["images"] else "image")
        rankings, weights = [], []
        for view in range(VIEWS):
            if settings["indexes"] in ("bm25", "both"):
                rankings.append(self.lexical[view].search(query, settings["depth"], allowed))
                weights.append(1.0 - settings["dense_weight"])
            if settings["indexes"] in ("dense", "both"):
                rankings.append(self.dense[view].search(query, settings["depth"], allowed))
                weights.append(settings["dense_weight"])
            if settings["indexes"] == "lazy":  # BM25's candidates, embedded now, ranked by meaning
                first = self.lexical[view].search(query, settings["depth"], allowed)
                rankings += [first, self.lazy[view].rerank(query, [row for row, _ in first])]
                weights += [1.0 - settings["dense_weight"], settings["dense_weight"]]
        if settings["sessions"] > 0:
            top = self.sessions.search(query, settings["sessions"], scope)
            inside = (self.lexical or self.dense)[0].search(query, settings["depth"], self.sessions.rows_in(top))
            rankings.append(memolib.hierarchical(top, inside, self.sessions, allowed=allowed))
            weights.append(0.5)
        hits = fuse(rankings, weights, settings)
        if settings["entities"]:  # rounds naming the question's names; ties in the fused order
            rankings.append(self.phrases.search(task.instruction, settings["depth"], allowed, prior=hits))
            weights.append(0.5)
            hits = fuse(rankings, weights, settings)
        if settings["feedback"]:
            expansion = memolib.feedback_terms(query, [self.store.units[row].text for row, _ in hits[:3]])
            rankings.append(memolib.expanded_search(self.lexical[0], query, expansion, settings["depth"], allowed))
            weights.append(0.5)
            hits = fuse(rankings, weights, settings)
        if settings["passages"] != "off":  # the best passages, each standing for its best turn
            passages = self.passages[passage_key(settings)]
            ranked = passages.search(query, settings["passage_top"], scope)
            standing = memolib.best_turns(ranked, self.within(query, passages.rows_in(ranked)), passages)
            hits = memolib.rrf([hits, standing], k=settings["rrf_k"], weights=[1.0, settings["passage_weight"]])
        if settings["late"]:  # MaxSim reranks the first stage's DEPTH best, fused with its order
            late = self.tokens.rerank(query, [row for row, _ in hits[:settings["depth"]]])
            hits = memolib.rrf([hits, late], k=settings["rrf_k"], weights=[1.0, settings["late_weight"]])
        if settings["temporal"]:
            dated = self.dates.search(task.instruction, settings["depth"], allowed, prior=hits,
                                      now=task.metadata.get("time"))
            hits = memolib.rrf([hits, dated], k=settings["rrf_k"]) if dated else hits
        if settings["speakers"]:
            spoken = memolib.speaker_ranking(task.instruction, hits, self.store.units)
            hits = memolib.rrf([hits, spoken], k=settings["rrf_k"]) if spoken else hits
        if settings["session_weight"] > 0:  # each hit's score mixed with its session's
            ranked_sessions = self.sessions.search(query, self.sessions.size, scope)
            hits = memolib.hierarchical(ranked_sessions, hits, self.sessions, settings["session_weight"], outside=True)
        if settings["rank"] and self.ranker is not None:  # the fitted ranker orders its pool first, reading the order above
            pool = self.signals.candidates(question, query, allowed, self.store, scope=scope,
                                           now=task.metadata.get("time"), pool=self.ranker.pool, prior=hits)
            ranked = self.ranker.rank(pool, question, qtype, memolib.scope_of(task))
            placed = {row for row, _ in ranked}
            hits = ranked + [hit for hit in hits if hit[0] not in placed]
        if settings["recency"] > 0:
            hits = memolib.recency_rerank(hits, self.store, settings["recency"])
        if applies(settings["latest"], memolib.is_state_question(question)):
            hits = memolib.latest_state(hits, self.store, settings["latest_floor"], settings["depth"])
        if settings["mmr"]:
            rows = memolib.mmr(hits, self.dense[0].matrix, PAYLOAD_UNITS, settings["mmr_lambda"])
        else:
            rows = [row for row, _ in hits]
        if applies(settings["coverage"], memolib.is_count_question(question)):
            rows = memolib.coverage(rows, self.store, PAYLOAD_UNITS, settings["coverage_quota"])
        if settings["session_spread"] > 0:
            rows = memolib.session_diversity(rows, self.store, settings["session_spread"])
        if settings["window"] > 0:
            rows = memolib.expand(rows, self.store, settings["window"])
        if applies(settings["listing"], memolib.is_list_question(question)):
            rows = memolib.session_expand(rows, self.store, settings["listing_radius"])
        ranked = self.store.ranked(rows[:PAYLOAD_UNITS])
        if not ranked:
            return memolib.make_payload([], budget=budget)
        return memolib.make_payload([memolib.chronological(ranked)], budget=budget,
                                    images=[image for unit, _ in ranked for image in unit.images],
                                    evidence=memolib.citations([unit for unit, _ in ranked]))

    def within(self, query, rows):
        """The turns among `rows` ranked for `query`: the first view's indexes searched there, fused."""
        if not rows:
            return []
        found = [index[0].search(query, len(rows), rows) for index in (self.lexical, self.dense) if index]
        return memolib.rrf(found)


def applies(mode, asked):
    """Whether a stage set to "off" | "text" | "always" acts on this question (`asked`: its
    wording asks for what the stage does)."""
    return mode == "always" or (mode == "text" and asked)


def passage_key(settings):
    """The passage index `settings` searches: (kind, length), a whole session's length 0."""
    return settings["passages"], 0 if settings["passages"] == "session" else settings["passage_length"]


def passage_indexes(toolkit, dim):
    """The indexes a passage index keeps its passages in: BM25 and dense, as the turns are kept."""
    return (([memolib.BM25Index()] if NEEDS_BM25 else [])
            + ([memolib.DenseIndex(toolkit.embed_text, dim, vector_index=toolkit.vector_index)] if NEEDS_DENSE else []))


def fuse(rankings, weights, settings):
    """The rankings as one: weighted normalised scores, or reciprocal rank."""
    if settings["fusion"] == "weighted" and len(rankings) > 1:
        return memolib.weighted(rankings, weights)
    return memolib.rrf(rankings, k=settings["rrf_k"])


# The question router (memolib.QuestionRouter params: labels, log priors, per-feature log
# weights), fitted on the train split's questions and their types; None: no routing.
ROUTER = {
    "labels": ['AR', 'CD', 'FR', 'KR', 'MR', 'TR', 'TTL', 'VR', 'VS'],
    "prior": [-1.862, -2.686, -2.099, -2.77, -1.686, -2.44, -2.573, -2.91, -1.671],
    "weights": {
        "2": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "2 instead": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "^according": [-7.032, -5.846, -7.032, -6.37, -6.056, -6.933, -4.969, -6.081, -8.042],
        "^according to": [-7.032, -5.846, -7.032, -6.37, -6.056, -6.933, -4.969, -6.081, -8.042],
        "^did": [-2.769, -5.846, -7.032, -5.271, -7.155, -3.437, -8.014, -7.179, -8.042],
        "^did julian": [-3.598, -6.945, -7.032, -6.37, -7.155, -3.798, -8.014, -7.179, -8.042],
        "^did maya": [-4.634, -6.945, -7.032, -6.37, -7.155, -4.736, -8.014, -7.179, -8.042],
        "^did the": [-4.199, -5.846, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "^do": [-5.933, -6.945, -7.032, -6.37, -4.447, -6.933, -6.915, -7.179, -8.042],
        "^do you": [-5.933, -6.945, -7.032, -6.37, -4.447, -6.933, -6.915, -7.179, -8.042],
        "^does": [-5.933, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "^does the": [-7.032, -4.748, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "^how": [-5.086, -6.945, -5.933, -4.424, -5.209, -6.933, -8.014, -4.471, -8.042],
        "^how many": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "^is": [-5.422, -4.237, -7.032, -5.271, -7.155, -6.933, -8.014, -7.179, -8.042],
        "^is there": [-5.422, -4.547, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "^please": [-7.032, -4.237, -4.087, -6.37, -7.155, -6.933, -8.014, -7.179, -5.209],
        "^please determine": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "^please list": [-7.032, -6.945, -4.087, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "^please search": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "^what": [-4.835, -6.945, -3.182, -4.173, -3.077, -5.324, -4.517, -4.614, -6.432],
        "^what is": [-7.032, -6.945, -5.086, -6.37, -4.757, -5.835, -5.616, -7.179, -8.042],
        "^what species": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.069, -7.179, -8.042],
        "^when": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.225, -8.014, -7.179, -8.042],
        "^when did": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.536, -8.014, -7.179, -8.042],
        "^which": [-5.933, -6.945, -5.086, -4.76, -5.209, -4.988, -8.014, -4.982, -3.369],
        "^which image": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -4.15],
        "^which of": [-7.032, -6.945, -5.933, -6.37, -7.155, -6.933, -8.014, -7.179, -4.674],
        "^which picture": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "^why": [-7.032, -6.945, -5.933, -5.271, -3.859, -6.933, -8.014, -7.179, -8.042],
        "^why does": [-7.032, -6.945, -7.032, -6.37, -4.447, -6.933, -8.014, -7.179, -8.042],
        "a": [-3.535, -4.237, -4.835, -5.271, -3.859, -5.324, -4.082, -4.781, -4.192],
        "a dense": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -6.081, -8.042],
        "a long": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -8.042],
        "a plain": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.969, -5.57, -5.477],
        "a white": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -6.943],
        "about": [-5.086, -5.336, -5.086, -4.173, -4.321, -3.889, -8.014, -4.982, -4.674],
        "above": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.404, -5.233, -6.096],
        "according": [-7.032, -5.846, -5.933, -6.37, -5.545, -6.933, -4.969, -5.57, -8.042],
        "according to": [-7.032, -5.846, -5.933, -6.37, -5.545, -6.933, -4.969, -5.57, -8.042],
        "after": [-7.032, -5.846, -7.032, -4.76, -5.545, -4.368, -8.014, -7.179, -6.943],
        "against": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.517, -7.179, -4.997],
        "against a": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.58, -7.179, -5.209],
        "ai robotics": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.404, -5.233, -6.096],
        "all": [-7.032, -6.945, -4.634, -5.271, -7.155, -6.933, -6.915, -7.179, -5.334],
        "all photos": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "an": [-5.933, -5.846, -7.032, -6.37, -5.545, -6.933, -5.616, -4.235, -5.845],
        "an arabic": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "and": [-5.086, -4.112, -4.324, -4.173, -3.441, -5.324, -4.207, -4.781, -4.823],
        "and a": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -5.233, -6.096],
        "and dark": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -6.943],
        "answer": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "answer using": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "any": [-3.813, -4.748, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "any specific": [-4.324, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "arabic": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "arabic numeral": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "are": [-5.422, -5.846, -5.422, -5.271, -5.545, -6.933, -6.915, -4.471, -5.644],
        "as": [-5.933, -6.945, -5.422, -6.37, -5.545, -6.933, -8.014, -7.179, -4.823],
        "as this": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "at": [-5.933, -6.945, -5.086, -6.37, -6.056, -5.835, -5.306, -6.081, -5.644],
        "attached": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.915, -6.081, -5.334],
        "automation future": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.404, -5.233, -6.096],
        "background": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -4.35, -4.781, -4.906],
        "baking": [-5.422, -6.945, -5.086, -5.271, -5.209, -6.933, -4.252, -7.179, -4.823],
        "baking dessert": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.252, -7.179, -4.906],
        "before": [-7.032, -5.846, -5.933, -5.271, -5.209, -3.437, -8.014, -6.081, -8.042],
        "before or": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.536, -8.014, -7.179, -8.042],
        "bell": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -5.845],
        "bell shaped": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -5.845],
        "black": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -5.616, -7.179, -6.096],
        "blue": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.306, -4.982, -5.644],
        "blurred": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -5.845],
        "by": [-5.933, -4.999, -4.634, -5.271, -7.155, -6.933, -5.18, -7.179, -5.845],
        "category": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.878, -7.179, -5.845],
        "category is": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.878, -7.179, -8.042],
        "clothing": [-7.032, -6.945, -7.032, -5.271, -7.155, -5.835, -4.795, -7.179, -5.845],
        "clothing in": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.878, -7.179, -5.845],
        "cluster": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -5.644],
        "cluster of": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -5.644],
        "conflict": [-7.032, -4.547, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "conflicts": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "conflicts with": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "content": [-7.032, -6.945, -7.032, -5.271, -7.155, -6.933, -6.068, -5.233, -8.042],
        "content in": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.068, -5.233, -8.042],
        "contradiction": [-7.032, -4.748, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "conversation": [-4.467, -4.38, -3.476, -4.76, -4.21, -5.324, -4.969, -4.346, -4.071],
        "conversation as": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "conversation what": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -4.969, -6.081, -8.042],
        "cowl": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -5.616, -7.179, -5.845],
        "cowl neck": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -5.616, -7.179, -5.845],
        "daily": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.252, -7.179, -4.906],
        "daily life": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.252, -7.179, -4.906],
        "dark": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -4.969, -6.081, -5.845],
        "dd": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
        "dense": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -6.081, -8.042],
        "dessert": [-7.032, -6.945, -7.032, -5.271, -6.056, -6.933, -4.252, -6.081, -4.823],
        "dessert daily": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.252, -7.179, -4.906],
        "determine": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "determine whether": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "dialogue": [-5.933, -4.112, -7.032, -6.37, -6.056, -6.933, -6.915, -7.179, -8.042],
        "dialogue memory": [-7.032, -4.38, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "did": [-2.688, -5.336, -3.987, -3.425, -3.936, -3.002, -8.014, -4.781, -6.432],
        "did julian": [-3.598, -6.945, -5.933, -6.37, -6.056, -3.566, -8.014, -7.179, -6.943],
        "did maya": [-4.634, -6.945, -4.467, -4.424, -4.757, -4.368, -8.014, -4.781, -8.042],
        "did the": [-4.087, -5.846, -5.933, -4.424, -5.545, -4.988, -8.014, -7.179, -6.943],
        "discussing": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.536, -8.014, -6.081, -8.042],
        "do": [-5.933, -6.945, -7.032, -6.37, -4.321, -6.933, -6.915, -7.179, -8.042],
        "do you": [-5.933, -6.945, -7.032, -6.37, -4.447, -6.933, -6.915, -7.179, -8.042],
        "does": [-4.467, -4.237, -5.933, -4.424, -4.11, -6.933, -8.014, -7.179, -8.042],
        "e": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "e g": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "first": [-7.032, -6.945, -7.032, -6.37, -6.056, -4.368, -8.014, -7.179, -8.042],
        "flower": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.306, -6.081, -6.096],
        "flower with": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -7.179, -8.042],
        "flowers": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -5.306, -5.57, -5.845],
        "flowers with": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -6.432],
        "following": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "following information": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "for": [-5.933, -5.336, -4.087, -5.271, -3.721, -5.835, -8.014, -7.179, -4.608],
        "for all": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "format": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
        "format yyyy": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
        "from": [-7.032, -4.999, -7.032, -5.271, -5.209, -6.933, -5.449, -6.081, -4.997],
        "from a": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -5.816, -7.179, -5.845],
        "front": [-7.032, -6.945, -7.032, -6.37, -5.545, -6.933, -5.449, -6.081, -6.943],
        "future tech": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.404, -5.233, -6.096],
        "g": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "g 2": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "green": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -4.718, -7.179, -5.334],
        "green leaves": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -5.845],
        "hanging": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -5.334],
        "hanging from": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -7.179, -8.042],
        "have": [-7.032, -6.945, -5.422, -4.76, -4.447, -5.835, -8.014, -7.179, -8.042],
        "her": [-5.422, -4.999, -5.086, -6.37, -7.155, -4.736, -5.616, -6.081, -6.432],
        "how": [-5.086, -6.945, -5.933, -4.424, -4.757, -5.835, -8.014, -4.471, -6.943],
        "how many": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "image": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -4.043, -4.471, -3.698],
        "image ai": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.404, -5.233, -6.096],
        "image baking": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.252, -7.179, -4.906],
        "image image": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -7.179, -4.674],
        "image shown": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "image shows": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -4.823],
        "images": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.614, -4.746],
        "img1": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -4.043, -4.781, -4.608],
        "in": [-3.476, -4.237, -3.271, -4.173, -3.721, -3.638, -4.043, -3.745, -3.724],
        "in a": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -5.449, -7.179, -6.432],
        "in the": [-4.087, -4.999, -3.535, -4.76, -5.209, -3.798, -4.043, -4.235, -4.034],
        "information": [-7.032, -4.112, -7.032, -5.271, -7.155, -6.933, -8.014, -7.179, -8.042],
        "information conflicts": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "initially": [-7.032, -6.945, -7.032, -4.173, -6.056, -6.933, -8.014, -6.081, -8.042],
        "instead": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -8.014, -4.471, -8.042],
        "instead of": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -8.014, -4.471, -8.042],
        "is": [-4.835, -4.112, -4.835, -4.173, -3.859, -5.835, -4.006, -5.233, -4.378],
        "is about": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -4.906],
        "is shown": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.969, -7.179, -8.042],
        "is the": [-7.032, -5.846, -5.422, -5.271, -4.957, -5.835, -4.517, -7.179, -6.943],
        "is there": [-5.422, -4.38, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "jeans": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -8.042],
        "julian": [-3.421, -4.237, -4.199, -4.424, -3.859, -3.499, -8.014, -6.081, -5.477],
        "julian mention": [-4.199, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "large": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -5.57, -6.432],
        "learn": [-7.032, -4.999, -7.032, -6.37, -7.155, -4.988, -8.014, -7.179, -8.042],
        "leaves": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -5.845],
        "life": [-7.032, -6.945, -5.933, -6.37, -7.155, -6.933, -4.252, -7.179, -4.823],
        "life skill": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.252, -7.179, -4.906],
        "list": [-7.032, -6.945, -3.736, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "list the": [-7.032, -6.945, -4.087, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "long": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -4.969, -7.179, -6.096],
        "many": [-7.032, -5.336, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "maya": [-4.634, -4.237, -4.324, -3.805, -4.447, -4.225, -6.915, -4.614, -6.943],
        "memory": [-7.032, -4.237, -7.032, -6.37, -6.056, -6.933, -8.014, -7.179, -8.042],
        "memory the": [-7.032, -4.547, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "mention": [-3.476, -6.945, -7.032, -5.271, -6.056, -5.835, -8.014, -7.179, -8.042],
        "mention any": [-4.324, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "mentioned": [-5.933, -6.945, -3.271, -5.271, -5.209, -5.324, -8.014, -5.57, -6.432],
        "mentioned in": [-7.032, -6.945, -3.598, -6.37, -6.056, -5.835, -8.014, -5.57, -6.432],
        "mm": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
        "mm dd": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
        "neck": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -5.306, -7.179, -5.845],
        "numeral": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "numeral e": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "of": [-3.736, -4.237, -3.598, -4.424, -3.936, -5.835, -4.3, -3.96, -3.724],
        "of plant": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -8.042],
        "of the": [-5.422, -5.336, -5.422, -6.37, -5.545, -6.933, -5.18, -5.233, -4.192],
        "of two": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.915, -4.471, -8.042],
        "on a": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -5.616, -6.081, -6.096],
        "one hand": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.068, -5.57, -8.042],
        "open": [-7.032, -6.945, -7.032, -6.37, -5.545, -6.933, -5.616, -6.081, -6.432],
        "or": [-4.835, -5.846, -5.933, -5.271, -7.155, -4.225, -5.816, -7.179, -8.042],
        "or after": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.536, -8.014, -7.179, -8.042],
        "orange": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.068, -5.233, -6.096],
        "over": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -8.042],
        "over a": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -7.179, -8.042],
        "pale": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -6.943],
        "photos": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -5.57, -5.334],
        "photos of": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "picture": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -4.207, -4.982, -5.209],
        "picture image": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.207, -6.081, -8.042],
        "pictures": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -5.57, -4.823],
        "pink": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -5.845],
        "plain": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.969, -5.57, -5.477],
        "plain white": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.18, -7.179, -6.943],
        "plant": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.306, -7.179, -5.334],
        "plant is": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -8.042],
        "plant species": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "please": [-7.032, -4.237, -4.087, -6.37, -7.155, -5.835, -8.014, -4.346, -5.209],
        "please answer": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "please determine": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "please list": [-7.032, -6.945, -4.087, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "please search": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "purple": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -5.449, -6.081, -6.432],
        "related": [-5.422, -6.945, -5.086, -6.37, -7.155, -6.933, -8.014, -5.233, -5.477],
        "related to": [-5.933, -6.945, -5.086, -6.37, -7.155, -6.933, -8.014, -5.233, -5.477],
        "remember": [-7.032, -6.945, -7.032, -6.37, -4.447, -6.933, -8.014, -7.179, -8.042],
        "represents": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "return": [-7.032, -6.945, -7.032, -6.37, -7.155, -3.889, -8.014, -5.233, -8.042],
        "return in": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
        "robotics": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.404, -5.233, -6.096],
        "robotics automation": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.404, -5.233, -6.096],
        "same": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -6.081, -4.674],
        "same plant": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "search": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -4.906],
        "search for": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -4.906],
        "set against": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -6.096],
        "shaped": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -5.845],
        "shared": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.982, -4.906],
        "shared in": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -5.233, -5.097],
        "showed": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "shown": [-7.032, -5.846, -7.032, -6.37, -6.056, -6.933, -4.969, -7.179, -4.906],
        "shown in": [-7.032, -5.846, -7.032, -6.37, -6.056, -6.933, -4.969, -7.179, -5.334],
        "shows": [-7.032, -6.945, -7.032, -6.37, -6.056, -6.933, -8.014, -7.179, -4.545],
        "shows the": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.209],
        "skill": [-7.032, -6.945, -7.032, -5.271, -7.155, -5.835, -4.252, -7.179, -4.906],
        "sleeves": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -7.179, -5.845],
        "small": [-7.032, -6.945, -7.032, -6.37, -7.155, -5.835, -6.404, -5.57, -5.477],
        "species": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.969, -7.179, -5.334],
        "species of": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.18, -7.179, -8.042],
        "species shared": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "specific": [-3.813, -6.945, -7.032, -6.37, -6.056, -5.835, -8.014, -6.081, -6.943],
        "stamens": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -7.179, -6.096],
        "standing": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.306, -7.179, -6.096],
        "standing against": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.306, -7.179, -6.096],
        "stem": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.306, -7.179, -5.644],
        "surrounded": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -6.096],
        "surrounded by": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -6.096],
        "sweater": [-7.032, -6.945, -7.032, -5.271, -6.056, -6.933, -5.616, -7.179, -5.845],
        "tech": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.404, -5.233, -6.096],
        "the": [-2.889, -3.334, -2.662, -2.936, -2.76, -3.378, -3.971, -3.624, -3.28],
        "the clothing": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.878, -7.179, -8.042],
        "the content": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -6.068, -5.233, -8.042],
        "the conversation": [-4.634, -4.38, -3.476, -4.76, -4.321, -5.324, -4.969, -4.614, -4.11],
        "the dialogue": [-7.032, -4.112, -7.032, -6.37, -6.056, -6.933, -6.915, -7.179, -8.042],
        "the following": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "the format": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
        "the picture": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -4.207, -4.982, -6.943],
        "the pictures": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -6.081, -4.823],
        "the same": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -6.081, -4.674],
        "the user": [-4.087, -4.748, -5.422, -3.805, -4.957, -5.324, -8.014, -7.179, -5.845],
        "there": [-4.835, -4.38, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "there a": [-5.086, -4.748, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "this": [-5.933, -5.846, -7.032, -5.271, -7.155, -6.933, -6.915, -7.179, -5.209],
        "this image": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "to the": [-5.933, -5.846, -7.032, -6.37, -4.757, -5.835, -4.969, -5.233, -5.644],
        "top": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -6.081, -8.042],
        "two": [-7.032, -6.945, -5.933, -4.76, -6.056, -6.933, -6.068, -4.235, -6.096],
        "user": [-4.087, -4.547, -5.422, -3.805, -4.957, -5.324, -8.014, -7.179, -5.845],
        "using": [-5.422, -5.846, -5.933, -6.37, -5.545, -6.933, -8.014, -4.471, -8.042],
        "using an": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -4.471, -8.042],
        "vertical": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.449, -7.179, -6.943],
        "visible": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -6.081, -8.042],
        "wearing": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -5.616, -5.57, -5.845],
        "wearing a": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -5.57, -5.845],
        "were": [-5.933, -5.846, -3.896, -6.37, -4.757, -6.933, -8.014, -6.081, -8.042],
        "were mentioned": [-7.032, -6.945, -3.987, -6.37, -5.545, -6.933, -8.014, -7.179, -8.042],
        "what": [-4.634, -5.846, -3.14, -3.537, -2.76, -5.324, -3.971, -4.346, -6.432],
        "what category": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.878, -7.179, -8.042],
        "what is": [-7.032, -6.945, -5.086, -4.76, -4.757, -5.835, -5.616, -7.179, -8.042],
        "what species": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -4.969, -7.179, -8.042],
        "when": [-5.933, -6.945, -5.422, -6.37, -3.859, -4.225, -8.014, -7.179, -6.943],
        "when did": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.536, -8.014, -7.179, -8.042],
        "whether": [-7.032, -4.001, -7.032, -5.271, -7.155, -5.835, -8.014, -7.179, -8.042],
        "whether the": [-7.032, -4.237, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -8.042],
        "which": [-5.422, -6.945, -4.634, -4.173, -4.447, -4.225, -8.014, -4.781, -3.332],
        "which image": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -4.15],
        "which of": [-7.032, -6.945, -5.933, -6.37, -7.155, -6.933, -8.014, -7.179, -4.674],
        "which picture": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -8.014, -7.179, -5.334],
        "white": [-7.032, -5.846, -7.032, -5.271, -7.155, -6.933, -4.795, -6.081, -5.477],
        "white background": [-7.032, -5.846, -7.032, -6.37, -7.155, -6.933, -5.18, -7.179, -6.943],
        "why": [-7.032, -6.945, -5.933, -4.76, -3.599, -6.933, -8.014, -7.179, -8.042],
        "why does": [-7.032, -6.945, -7.032, -6.37, -4.21, -6.933, -8.014, -7.179, -8.042],
        "with": [-5.086, -3.901, -7.032, -5.271, -5.545, -5.324, -4.082, -4.614, -4.431],
        "with a": [-5.933, -6.945, -7.032, -6.37, -6.056, -6.933, -4.878, -5.57, -6.432],
        "with one": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.816, -7.179, -8.042],
        "with the": [-5.933, -4.112, -7.032, -6.37, -7.155, -6.933, -6.915, -5.57, -5.644],
        "woman": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.306, -7.179, -6.096],
        "woman standing": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -7.179, -6.432],
        "yellow": [-7.032, -6.945, -7.032, -6.37, -7.155, -6.933, -5.616, -6.081, -5.845],
        "yyyy": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
        "yyyy mm": [-7.032, -6.945, -7.032, -6.37, -7.155, -4.1, -8.014, -5.57, -8.042],
    },
}

# The fitted ranker (memolib.ranker_from_params): "linear" (LinearRanker: the weight of each
# signal, alone and per question cue or routed type) or "trees" (TreeRanker: per tree, each
# node's feature index into "features", threshold (<= goes left), children, and leaf value; a
# candidate scores the sum of its leaves); per-fold models for the train conversations, fitted on the
# train split's questions and their evidence on the host; None: no ranking stage.
RANKER = {
    "model": "blend",
    "pool": 30,
    "late": False,
    "linear": {
        "pool": 30,
        "late": False,
        "weights": {
            "bm25_rank": 1.0972,
            "bm25_window_rank": 0.3236,
            "dense_rank": 0.993,
            "dense_window_rank": -0.5104,
            "entities_rank": 0.1072,
            "temporal_rank": -0.7265,
            "session_rank": -0.2609,
            "fused_rank": 0.0148,
            "bm25_score": 0.2909,
            "bm25_window_score": 0.8502,
            "dense_score": 1.2207,
            "dense_window_score": 1.9402,
            "entities_score": -1.1028,
            "temporal_score": 3.0418,
            "session_score": 2.9861,
            "fused_score": 0.6865,
            "position": -1.1822,
            "recency": -0.3569,
            "pictured": 1.3751,
            "length": -1.7668,
            "time|bm25_rank": -0.0828,
            "time|bm25_window_rank": 0.3564,
            "time|dense_rank": 0.2853,
            "time|dense_window_rank": 0.6531,
            "time|entities_rank": 0.0014,
            "time|temporal_rank": -0.4238,
            "time|session_rank": 0.8372,
            "time|fused_rank": 0.2444,
            "time|bm25_score": -0.4886,
            "time|bm25_window_score": 0.2166,
            "time|dense_score": 0.2468,
            "time|dense_window_score": 0.6452,
            "time|entities_score": -0.1878,
            "time|temporal_score": -0.4352,
            "time|session_score": 1.0083,
            "time|fused_score": -0.5373,
            "time|position": -0.583,
            "time|recency": 0.5721,
            "time|pictured": -0.0314,
            "time|length": 0.0402,
            "state|bm25_rank": -0.0962,
            "state|bm25_window_rank": -0.0604,
            "state|dense_rank": 0.1852,
            "state|dense_window_rank": -0.0986,
            "state|entities_rank": -0.3873,
            "state|temporal_rank": -0.9707,
            "state|session_rank": 1.0902,
            "state|fused_rank": 0.6849,
            "state|bm25_score": 0.6996,
            "state|bm25_window_score": -1.7947,
            "state|dense_score": -0.1067,
            "state|dense_window_score": 0.7678,
            "state|entities_score": -0.9348,
            "state|temporal_score": -1.2546,
            "state|session_score": -0.0084,
            "state|fused_score": -0.0171,
            "state|position": 2.1855,
            "state|recency": 0.6306,
            "state|pictured": -1.4178,
            "state|length": 0.165,
            "count|bm25_rank": 0.0759,
            "count|bm25_window_rank": -0.0721,
            "count|dense_rank": 0.1059,
            "count|dense_window_rank": -0.3841,
            "count|entities_rank": -0.3467,
            "count|temporal_rank": -0.3856,
            "count|session_rank": -0.616,
            "count|fused_rank": -0.9298,
            "count|bm25_score": 0.2693,
            "count|bm25_window_score": -0.7308,
            "count|dense_score": 0.2083,
            "count|dense_window_score": 0.827,
            "count|entities_score": 0.4582,
            "count|temporal_score": 0.1874,
            "count|session_score": 0.8558,
            "count|fused_score": -0.5176,
            "count|position": 0.5947,
            "count|recency": -0.6335,
            "count|pictured": 0.9764,
            "count|length": -0.2921,
            "list|bm25_rank": -1.1927,
            "list|bm25_window_rank": -1.037,
            "list|dense_rank": -0.4817,
            "list|dense_window_rank": -0.2148,
            "list|entities_rank": 0.211,
            "list|temporal_rank": -0.2174,
            "list|session_rank": -0.9346,
            "list|fused_rank": 0.778,
            "list|bm25_score": -1.1321,
            "list|bm25_window_score": -0.5355,
            "list|dense_score": 0.274,
            "list|dense_window_score": 0.4426,
            "list|entities_score": 0.6815,
            "list|temporal_score": 0.4059,
            "list|session_score": 0.9843,
            "list|fused_score": -1.5369,
            "list|position": 0.8731,
            "list|recency": 0.5303,
            "list|pictured": 0.2662,
            "list|length": -0.7815,
            "type:AR|bm25_rank": 0.1556,
            "type:AR|bm25_window_rank": -0.4502,
            "type:AR|dense_rank": -0.1027,
            "type:AR|dense_window_rank": 0.4419,
            "type:AR|entities_rank": 0.3908,
            "type:AR|session_rank": -0.0652,
            "type:AR|fused_rank": 0.7191,
            "type:AR|bm25_score": -0.0373,
            "type:AR|bm25_window_score": 0.437,
            "type:AR|dense_score": -0.6674,
            "type:AR|dense_window_score": 1.6118,
            "type:AR|entities_score": 0.2827,
            "type:AR|session_score": -2.0031,
            "type:AR|fused_score": 0.9189,
            "type:AR|position": -0.9772,
            "type:AR|recency": -0.2859,
            "type:AR|pictured": -1.3243,
            "type:AR|length": -1.2173,
            "type:CD|bm25_rank": -0.2088,
            "type:CD|bm25_window_rank": -0.9572,
            "type:CD|dense_rank": 0.5617,
            "type:CD|dense_window_rank": 0.9264,
            "type:CD|entities_rank": -0.2055,
            "type:CD|session_rank": 0.8327,
            "type:CD|fused_rank": -1.1483,
            "type:CD|bm25_score": 1.006,
            "type:CD|bm25_window_score": -0.0873,
            "type:CD|dense_score": 0.8234,
            "type:CD|dense_window_score": 0.3595,
            "type:CD|entities_score": -0.3866,
            "type:CD|session_score": 0.5375,
            "type:CD|fused_score": 0.2548,
            "type:CD|position": 0.8548,
            "type:CD|recency": 0.2041,
            "type:CD|pictured": -0.0946,
            "type:CD|length": -0.3344,
            "type:FR|bm25_rank": -1.0402,
            "type:FR|bm25_window_rank": -0.0215,
            "type:FR|dense_rank": -0.1281,
            "type:FR|dense_window_rank": -0.2339,
            "type:FR|entities_rank": 0.0925,
            "type:FR|temporal_rank": -0.475,
            "type:FR|session_rank": 1.0809,
            "type:FR|fused_rank": 0.415,
            "type:FR|bm25_score": -0.7004,
            "type:FR|bm25_window_score": -0.711,
            "type:FR|dense_score": -0.2283,
            "type:FR|dense_window_score": -0.2719,
            "type:FR|entities_score": 0.572,
            "type:FR|temporal_score": 2.7701,
            "type:FR|session_score": 1.9071,
            "type:FR|fused_score": -0.0583,
            "type:FR|position": -1.0435,
            "type:FR|recency": -0.277,
            "type:FR|pictured": -0.0579,
            "type:FR|length": 0.2722,
            "type:KR|bm25_rank": -0.0817,
            "type:KR|bm25_window_rank": -0.0383,
            "type:KR|dense_rank": 0.609,
            "type:KR|dense_window_rank": 0.3526,
            "type:KR|session_rank": -0.2268,
            "type:KR|fused_rank": -0.0245,
            "type:KR|bm25_score": -0.1142,
            "type:KR|bm25_window_score": -0.1535,
            "type:KR|dense_score": 0.5497,
            "type:KR|dense_window_score": 0.5185,
            "type:KR|session_score": -0.3407,
            "type:KR|fused_score": -0.3126,
            "type:KR|position": 0.2046,
            "type:KR|recency": -0.1445,
            "type:KR|pictured": 0.4275,
            "type:KR|length": 0.0604,
            "type:MR|bm25_rank": 1.1131,
            "type:MR|bm25_window_rank": 0.7056,
            "type:MR|dense_rank": -0.6664,
            "type:MR|dense_window_rank": -0.2409,
            "type:MR|entities_rank": 0.1837,
            "type:MR|temporal_rank": -0.4644,
            "type:MR|session_rank": -0.8231,
            "type:MR|fused_rank": -0.5811,
            "type:MR|bm25_score": -0.7922,
            "type:MR|bm25_window_score": -0.355,
            "type:MR|dense_score": 0.7396,
            "type:MR|dense_window_score": 0.47,
            "type:MR|entities_score": -0.6673,
            "type:MR|temporal_score": -1.078,
            "type:MR|session_score": 1.5995,
            "type:MR|fused_score": -0.4373,
            "type:MR|position": 0.0761,
            "type:MR|recency": 1.5366,
            "type:MR|pictured": -0.2365,
            "type:MR|length": -0.8897,
            "type:TR|bm25_rank": 0.829,
            "type:TR|bm25_window_rank": 0.379,
            "type:TR|dense_rank": 0.3778,
            "type:TR|dense_window_rank": 0.1202,
            "type:TR|entities_rank": -0.6235,
            "type:TR|temporal_rank": -0.4238,
            "type:TR|session_rank": -1.4262,
            "type:TR|fused_rank": -0.2797,
            "type:TR|bm25_score": -0.4033,
            "type:TR|bm25_window_score": -0.5792,
            "type:TR|dense_score": 0.2357,
            "type:TR|dense_window_score": -1.1902,
            "type:TR|entities_score": -1.1884,
            "type:TR|temporal_score": -0.4352,
            "type:TR|session_score": -0.2747,
            "type:TR|fused_score": 0.2411,
            "type:TR|position": -1.0318,
            "type:TR|recency": -2.0078,
            "type:TR|pictured": -0.4446,
            "type:TR|length": -0.3863,
            "type:TTL|bm25_rank": 1.1357,
            "type:TTL|bm25_window_rank": 0.4064,
            "type:TTL|dense_rank": -0.4526,
            "type:TTL|dense_window_rank": -0.4446,
            "type:TTL|session_rank": 0.5439,
            "type:TTL|fused_rank": 0.2537,
            "type:TTL|bm25_score": 0.8447,
            "type:TTL|bm25_window_score": 0.819,
            "type:TTL|dense_score": -0.301,
            "type:TTL|dense_window_score": -0.5049,
            "type:TTL|session_score": 0.2035,
            "type:TTL|fused_score": 0.4723,
            "type:TTL|position": 0.2567,
            "type:TTL|recency": 0.0729,
            "type:TTL|pictured": 0.5042,
            "type:TTL|length": 0.088,
            "type:VR|bm25_rank": -0.1407,
            "type:VR|bm25_window_rank": 0.8775,
            "type:VR|dense_rank": 0.0965,
            "type:VR|dense_window_rank": 0.0963,
            "type:VR|temporal_rank": -0.2609,
            "type:VR|session_rank": 0.023,
            "type:VR|fused_rank": 0.2843,
            "type:VR|bm25_score": 0.3464,
            "type:VR|bm25_window_score": 0.6945,
            "type:VR|dense_score": 0.5982,
            "type:VR|dense_window_score": 0.5505,
            "type:VR|temporal_score": 0.287,
            "type:VR|session_score": 0.1697,
            "type:VR|fused_score": -0.0333,
            "type:VR|position": 0.7046,
            "type:VR|recency": -0.0331,
            "type:VR|pictured": 1.409,
            "type:VR|length": 0.041,
            "type:VS|bm25_rank": -0.6648,
            "type:VS|bm25_window_rank": -0.5776,
            "type:VS|dense_rank": 0.6977,
            "type:VS|dense_window_rank": -1.5285,
            "type:VS|entities_rank": 0.2692,
            "type:VS|temporal_rank": 0.8975,
            "type:VS|session_rank": -0.2,
            "type:VS|fused_rank": 0.3764,
            "type:VS|bm25_score": 0.1413,
            "type:VS|bm25_window_score": 0.7858,
            "type:VS|dense_score": -0.5292,
            "type:VS|dense_window_score": 0.3968,
            "type:VS|entities_score": 0.2846,
            "type:VS|temporal_score": 1.4978,
            "type:VS|session_score": 1.1872,
            "type:VS|fused_score": -0.3591,
            "type:VS|position": -0.2265,
            "type:VS|recency": 0.5778,
            "type:VS|pictured": 1.1924,
            "type:VS|length": 0.5991,
        },
    },
    "trees": {
        "model": "trees",
        "pool": 30,
        "late": False,
        "features": ['bm25_rank', 'bm25_window_rank', 'dense_rank', 'dense_window_rank', 'late_rank', 'entities_rank', 'temporal_rank', 'speakers_rank', 'session_rank', 'fused_rank', 'bm25_score', 'bm25_window_score', 'dense_score', 'dense_window_score', 'late_score', 'entities_score', 'temporal_score', 'speakers_score', 'session_score', 'fused_score', 'image', 'position', 'recency', 'pictured', 'length', 'is:time', 'is:state', 'is:count', 'is:list', 'is:type:AR', 'is:type:CD', 'is:type:FR', 'is:type:KR', 'is:type:MR', 'is:type:TR', 'is:type:TTL', 'is:type:VR', 'is:type:VS'],
        "trees": [
            {
                "feature": [10, 18, -1, 2, 31, -1, -1, -1, 2, 3, -1, -1, 1, -1, -1],
                "threshold": [0.288792, 0.702186, 0.0, 0.069048, 0.0, 0.0, 0.0, 0.0, 0.087121, 0.074176, 0.0, 0.0, 0.118056, 0.0, 0.0],
                "left": [1, 2, -1, 4, 5, -1, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 3, -1, 7, 6, -1, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.094788, 0.0, 0.0, -0.065028, -0.032088, -0.002403, 0.0, 0.0, -0.002403, 0.041261, 0.0, 0.041512, 0.088912],
            },
            {
                "feature": [11, 18, 13, -1, -1, 21, -1, -1, 12, 23, 1, -1, -1, -1, -1],
                "threshold": [0.503381, 0.801537, 0.364269, 0.0, 0.0, 0.585784, 0.0, 0.0, 0.817653, 0.0, 0.416667, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.087628, -0.044332, 0.0, -0.001565, -0.044332, 0.0, 0.0, 0.0, -0.001565, 0.028322, 0.049505, 0.075653],
            },
            {
                "feature": [9, 18, -1, 2, -1, -1, 0, 21, 9, -1, -1, -1, 23, -1, -1],
                "threshold": [0.118056, 0.702186, 0.0, 0.069048, 0.0, 0.0, 0.416667, 0.622024, 0.183333, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, 9, -1, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 11, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.078616, 0.0, -0.042649, -0.002732, 0.0, 0.0, 0.0, 0.001668, 0.045094, -0.002732, 0.0, 0.05573, 0.081523],
            },
            {
                "feature": [11, 2, 18, -1, -1, -1, 0, 13, -1, -1, 2, 23, -1, -1, -1],
                "threshold": [0.358402, 0.154762, 0.702186, 0.0, 0.0, 0.0, 0.291667, 0.65676, 0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 10, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.078529, -0.038899, -0.00496, 0.0, 0.0, -0.00496, 0.034362, 0.0, 0.0, 0.038285, 0.06444, 0.078057],
            },
            {
                "feature": [12, 11, 18, -1, -1, -1, 11, 2, -1, -1, 2, 21, -1, -1, -1],
                "threshold": [0.409861, 0.497067, 0.688278, 0.0, 0.0, 0.0, 0.705004, 0.291667, 0.0, 0.0, 0.416667, 0.424812, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 10, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.075292, -0.03956, -0.002759, 0.0, 0.0, -0.002759, 0.037651, 0.0, 0.0, 0.058569, 0.037651, 0.071298],
            },
            {
                "feature": [2, 11, 18, -1, -1, -1, 0, 13, -1, -1, 2, 23, -1, -1, -1],
                "threshold": [0.087121, 0.547546, 0.688278, 0.0, 0.0, 0.0, 0.291667, 0.65676, 0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 10, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.072733, -0.040484, -0.006721, 0.0, 0.0, -0.006721, 0.033053, 0.0, 0.0, 0.035615, 0.060151, 0.071109],
            },
            {
                "feature": [11, 13, 18, -1, -1, 2, -1, -1, 10, 21, 3, -1, -1, -1, -1],
                "threshold": [0.358402, 0.268023, 0.853, 0.0, 0.0, 0.118056, 0.0, 0.0, 0.721636, 0.431677, 0.064583, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.070425, -0.038323, 0.0, -0.038323, -0.005386, 0.0, 0.0, 0.0, -0.005386, 0.033879, -0.005386, 0.056576],
            },
            {
                "feature": [12, 18, -1, 21, -1, 24, -1, -1, 11, 2, -1, -1, 12, -1, -1],
                "threshold": [0.443141, 0.781741, 0.0, 0.535897, 0.0, 0.880231, 0.0, 0.0, 0.683817, 0.291667, 0.0, 0.0, 0.817653, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 3, -1, 5, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.065394, 0.0, -0.002063, 0.0, -0.038706, -0.002063, 0.0, 0.0, -0.002063, 0.03183, 0.0, 0.037487, 0.061959],
            },
            {
                "feature": [1, 13, 18, -1, -1, 2, -1, -1, 12, 23, -1, -1, 10, -1, -1],
                "threshold": [0.118056, 0.268023, 0.853, 0.0, 0.0, 0.133929, 0.0, 0.0, 0.541087, 0.0, 0.0, 0.0, 0.832449, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.066157, -0.034759, 0.0, -0.034759, -0.002293, 0.0, 0.0, -0.002293, 0.027492, 0.0, 0.033058, 0.058733],
            },
            {
                "feature": [11, 18, 13, -1, -1, 21, -1, -1, 12, 11, -1, 23, -1, -1, -1],
                "threshold": [0.358402, 0.801537, 0.364269, 0.0, 0.0, 0.563859, 0.0, 0.0, 0.817653, 0.723685, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, 12, -1, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 14, 11, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.064757, -0.037241, 0.0, -0.005496, -0.037241, 0.0, 0.0, -0.005496, 0.0, 0.01246, 0.033989, 0.05411],
            },
            {
                "feature": [12, 18, -1, 9, -1, -1, 11, 12, -1, -1, 2, 23, -1, -1, -1],
                "threshold": [0.409861, 0.688278, 0.0, 0.060662, 0.0, 0.0, 0.67558, 0.868113, 0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 10, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.061914, 0.0, -0.039004, -0.003496, 0.0, 0.0, -0.003496, 0.027444, 0.0, 0.0, 0.027444, 0.04987, 0.060645],
            },
            {
                "feature": [2, 11, 18, -1, -1, -1, 0, 3, -1, -1, 2, 23, -1, -1, -1],
                "threshold": [0.087121, 0.547546, 0.688278, 0.0, 0.0, 0.0, 0.291667, 0.154762, 0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 10, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.061612, -0.034802, -0.006719, 0.0, 0.0, -0.006719, 0.024677, 0.0, 0.0, 0.026753, 0.04883, 0.059624],
            },
            {
                "feature": [11, 18, -1, 21, -1, -1, 2, 23, 2, -1, -1, 11, -1, -1, -1],
                "threshold": [0.358402, 0.801537, 0.0, 0.563859, 0.0, 0.0, 0.416667, 0.0, 0.105556, 0.0, 0.0, 0.521451, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, 9, -1, -1, 12, -1, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 14, 11, 10, -1, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.056415, 0.0, -0.005531, -0.034977, 0.0, 0.0, 0.0, -0.005531, 0.013868, 0.0, -0.005531, 0.032341, 0.051623],
            },
            {
                "feature": [12, 18, -1, 21, 9, -1, -1, -1, 0, 3, -1, -1, 23, -1, -1],
                "threshold": [0.443141, 0.781741, 0.0, 0.535897, 0.039231, 0.0, 0.0, 0.0, 0.416667, 0.154762, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, 5, -1, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 3, -1, 7, 6, -1, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.057035, 0.0, 0.0, -0.033658, -0.002485, -0.034487, 0.0, 0.0, -0.002485, 0.026538, 0.0, 0.03719, 0.05788],
            },
            {
                "feature": [1, 13, 18, -1, -1, 2, -1, -1, 12, 23, -1, -1, 23, -1, -1],
                "threshold": [0.118056, 0.268023, 0.853, 0.0, 0.0, 0.225, 0.0, 0.0, 0.541087, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.058664, -0.030425, 0.0, -0.026461, -0.002808, 0.0, 0.0, -0.002808, 0.021797, 0.0, 0.029989, 0.051969],
            },
            {
                "feature": [9, 18, 12, -1, -1, 2, -1, -1, 2, 23, -1, -1, 10, -1, -1],
                "threshold": [0.154762, 0.781741, 0.561162, 0.0, 0.0, 0.054094, 0.0, 0.0, 0.416667, 0.0, 0.0, 0.0, 0.802048, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.056258, -0.030815, 0.0, -0.030666, 0.00038, 0.0, 0.0, 0.00038, 0.031531, 0.0, 0.031531, 0.053715],
            },
            {
                "feature": [11, 2, 18, -1, 21, -1, -1, -1, 12, 23, 2, -1, -1, -1, -1],
                "threshold": [0.595701, 0.225, 0.688278, 0.0, 0.508065, 0.0, 0.0, 0.0, 0.817653, 0.0, 0.183333, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, 5, -1, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 7, 4, -1, 6, -1, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.055444, 0.0, -0.019987, -0.039078, 0.001454, 0.0, 0.0, 0.0, 0.001454, 0.022898, 0.032388, 0.047957],
            },
            {
                "feature": [11, 18, 13, -1, -1, 21, -1, -1, 2, 21, 11, -1, -1, -1, -1],
                "threshold": [0.358402, 0.801537, 0.826864, 0.0, 0.0, 0.563859, 0.0, 0.0, 0.416667, 0.431677, 0.683817, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.055371, -0.031761, 0.0, -0.005634, -0.031761, 0.0, 0.0, 0.0, -0.001884, 0.027677, -0.005634, 0.045644],
            },
            {
                "feature": [2, 18, -1, 9, -1, -1, 11, 12, -1, -1, 21, 23, -1, -1, -1],
                "threshold": [0.087121, 0.688278, 0.0, 0.060662, 0.0, 0.0, 0.683817, 0.868113, 0.0, 0.0, 0.780193, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 10, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.054219, 0.0, -0.03427, -0.006421, 0.0, 0.0, -0.006421, 0.01952, 0.0, 0.0, 0.031479, 0.053681, 0.01952],
            },
            {
                "feature": [10, 3, 18, -1, -1, 24, -1, -1, 12, 11, -1, -1, 21, -1, -1],
                "threshold": [0.27627, 0.064583, 0.702186, 0.0, 0.0, 0.779728, 0.0, 0.0, 0.881805, 0.754533, 0.0, 0.0, 0.775986, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.055976, -0.033931, 0.0, -0.028409, -0.002336, 0.0, 0.0, -0.002336, 0.026185, 0.0, 0.050241, 0.028753],
            },
            {
                "feature": [12, 18, -1, 9, -1, 21, -1, -1, 10, 21, 18, -1, -1, -1, -1],
                "threshold": [0.409861, 0.688278, 0.0, 0.037749, 0.0, 0.730303, 0.0, 0.0, 0.817487, 0.622024, 0.495886, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 3, -1, 5, -1, 7, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, -0.053146, 0.0, -0.033164, 0.0, -0.003897, -0.018531, 0.0, 0.0, 0.0, -0.003897, 0.023787, -0.003897, 0.043877],
            },
            {
                "feature": [10, 3, -1, 24, -1, -1, 10, 21, 13, -1, -1, -1, 23, -1, -1],
                "threshold": [0.272607, 0.064583, 0.0, 0.779728, 0.0, 0.0, 0.850085, 0.622024, 0.195128, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, 9, -1, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 11, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.047443, 0.0, -0.027545, -0.00257, 0.0, 0.0, 0.0, -0.00257, 0.024703, -0.00257, 0.0, 0.028859, 0.051455],
            },
            {
                "feature": [12, 18, -1, 21, -1, -1, 10, 21, 3, -1, -1, -1, 23, -1, -1],
                "threshold": [0.443141, 0.688278, 0.0, 0.535897, 0.0, 0.0, 0.817487, 0.622024, 0.105556, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, 9, -1, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 11, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.052075, 0.0, -0.002953, -0.031559, 0.0, 0.0, 0.0, -0.002953, 0.024614, -0.002953, 0.0, 0.029916, 0.051222],
            },
            {
                "feature": [1, 18, 13, -1, -1, 21, -1, -1, 12, 23, -1, -1, 21, -1, -1],
                "threshold": [0.118056, 0.732973, 0.826864, 0.0, 0.0, 0.604348, 0.0, 0.0, 0.817653, 0.0, 0.0, 0.0, 0.780193, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.052585, -0.029108, 0.0, -0.002975, -0.029108, 0.0, 0.0, -0.002975, 0.025267, 0.0, 0.047228, 0.025267],
            },
            {
                "feature": [13, 18, -1, 19, -1, -1, 10, 23, -1, 21, -1, -1, 2, -1, -1],
                "threshold": [0.268023, 0.904529, 0.0, 0.516096, 0.0, 0.0, 0.750334, 0.0, 0.0, 0.718254, 0.0, 0.0, 0.75, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, -1, 10, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 9, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.050824, 0.0, -0.030324, -0.008823, 0.0, 0.0, -0.008823, 0.0, 0.021018, -0.008823, 0.0, 0.027785, 0.050951],
            },
            {
                "feature": [13, 18, 16, -1, -1, 19, -1, -1, 12, 11, -1, -1, 23, -1, -1],
                "threshold": [0.268023, 0.904529, 0.468627, 0.0, 0.0, 0.516096, 0.0, 0.0, 0.817653, 0.754533, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.052887, -0.029576, 0.0, -0.029576, -0.008688, 0.0, 0.0, -0.008688, 0.019851, 0.0, 0.02322, 0.048842],
            },
            {
                "feature": [19, 18, 13, -1, -1, 2, -1, -1, 2, 21, 1, -1, -1, -1, -1],
                "threshold": [0.863639, 0.537293, 0.768947, 0.0, 0.0, 0.054094, 0.0, 0.0, 0.75, 0.535897, 0.291667, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.052737, -0.028461, 0.0, -0.027855, 0.001953, 0.0, 0.0, 0.0, 0.011263, 0.03096, 0.001953, 0.046532],
            },
            {
                "feature": [11, 18, -1, 12, -1, -1, 0, 23, -1, 21, -1, -1, 2, -1, -1],
                "threshold": [0.208977, 0.647626, 0.0, 0.134237, 0.0, 0.0, 0.416667, 0.0, 0.0, 0.711982, 0.0, 0.0, 0.75, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, -1, 10, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 9, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.049335, 0.0, -0.031812, -0.00867, 0.0, 0.0, -0.00867, 0.0, 0.018252, -0.00867, 0.0, 0.024911, 0.049872],
            },
            {
                "feature": [13, 18, 16, -1, -1, 19, -1, -1, 12, 11, -1, -1, 23, -1, -1],
                "threshold": [0.268023, 0.904529, 0.468627, 0.0, 0.0, 0.516096, 0.0, 0.0, 0.817653, 0.754533, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.051757, -0.028629, 0.0, -0.028629, -0.008657, 0.0, 0.0, -0.008657, 0.018267, 0.0, 0.020375, 0.046843],
            },
            {
                "feature": [0, 18, -1, 21, 9, -1, -1, 13, -1, -1, 2, 23, -1, -1, -1],
                "threshold": [0.225, 0.564783, 0.0, 0.535897, 0.042572, 0.0, 0.0, 0.797774, 0.0, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, 5, -1, -1, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 3, -1, 7, 6, -1, -1, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.047934, 0.0, 0.0, -0.026756, 0.00443, 0.0, -0.026756, 0.00443, 0.0, 0.0, 0.00443, 0.031785, 0.046819],
            },
            {
                "feature": [19, 13, 18, -1, -1, 24, -1, -1, 1, 21, -1, -1, 23, -1, -1],
                "threshold": [0.863639, 0.268023, 0.844342, 0.0, 0.0, 0.746849, 0.0, 0.0, 0.416667, 0.552778, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.047361, -0.020166, 0.0, -0.019331, 0.001563, 0.0, 0.0, 0.020354, 0.001563, 0.0, 0.025749, 0.051785],
            },
            {
                "feature": [2, 18, -1, 21, -1, -1, 10, 21, 18, -1, -1, -1, 23, -1, -1],
                "threshold": [0.054094, 0.904529, 0.0, 0.35389, 0.0, 0.0, 0.817487, 0.617216, 0.473887, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, 9, -1, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 11, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.047632, 0.0, -0.010783, -0.031669, 0.0, 0.0, 0.0, -0.010783, 0.015799, -0.010783, 0.0, 0.020506, 0.045834],
            },
            {
                "feature": [11, 18, -1, 12, -1, -1, 12, 23, -1, 18, -1, -1, 21, -1, -1],
                "threshold": [0.208977, 0.647626, 0.0, 0.134237, 0.0, 0.0, 0.881805, 0.0, 0.0, 0.911718, 0.0, 0.0, 0.79057, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, -1, 10, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 9, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.047029, 0.0, -0.029962, -0.008368, 0.0, 0.0, -0.008368, 0.0, -0.008368, 0.019477, 0.0, 0.042549, 0.019477],
            },
            {
                "feature": [10, 13, 16, -1, -1, 21, 18, -1, -1, -1, 23, 31, -1, -1, -1],
                "threshold": [0.721636, 0.07338, 0.468627, 0.0, 0.0, 0.535897, 0.416237, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, 7, -1, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 5, 4, -1, -1, 9, 8, -1, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.047546, -0.022892, 0.0, 0.0, -0.022892, 0.007519, -0.022892, 0.0, 0.0, 0.023833, 0.007519, 0.042056],
            },
            {
                "feature": [2, 18, -1, -1, 10, 23, 21, -1, -1, 21, -1, -1, 23, -1, -1],
                "threshold": [0.054094, 0.688278, 0.0, 0.0, 0.850085, 0.0, 0.535897, 0.0, 0.0, 0.724747, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, -1, 5, 6, 7, -1, -1, 10, -1, -1, 13, -1, -1],
                "right": [4, 3, -1, -1, 12, 9, 8, -1, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.049806, -0.017383, 0.0, 0.0, 0.0, 0.002981, -0.010429, 0.0, 0.017183, -0.010429, 0.0, 0.021683, 0.04561],
            },
            {
                "feature": [18, -1, 12, 23, 13, 21, 10, -1, -1, -1, -1, -1, 21, -1, -1],
                "threshold": [0.459076, 0.0, 0.817653, 0.0, 0.886063, 0.563859, 0.026924, 0.0, 0.0, 0.0, 0.0, 0.0, 0.79057, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, 6, 7, -1, -1, -1, -1, -1, 13, -1, -1],
                "right": [2, -1, 12, 11, 10, 9, 8, -1, -1, -1, -1, -1, 14, -1, -1],
                "value": [0.0, -0.047057, 0.0, 0.0, 0.0, 0.0, 0.0, -0.019466, -0.002211, -0.019466, 0.013519, 0.013519, 0.0, 0.036994, 0.013519],
            },
            {
                "feature": [1, 18, 13, -1, -1, 21, -1, -1, 2, 23, -1, 21, -1, -1, -1],
                "threshold": [0.118056, 0.732973, 0.826864, 0.0, 0.0, 0.604348, 0.0, 0.0, 0.75, 0.0, 0.0, 0.784161, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, -1, 12, -1, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 14, 11, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.047398, -0.024706, 0.0, -0.002743, -0.024706, 0.0, 0.0, -0.002519, 0.0, 0.025857, -0.002743, 0.042946],
            },
            {
                "feature": [13, 18, -1, 19, -1, -1, 10, 23, -1, 21, -1, -1, 31, -1, -1],
                "threshold": [0.268023, 0.904529, 0.0, 0.516096, 0.0, 0.0, 0.750334, 0.0, 0.0, 0.718254, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, -1, 10, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 9, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.044136, 0.0, -0.026548, -0.0081, 0.0, 0.0, -0.0081, 0.0, 0.01583, -0.0081, 0.0, 0.035268, 0.01583],
            },
            {
                "feature": [10, 13, -1, 18, -1, -1, 2, 21, 13, -1, -1, -1, 21, -1, -1],
                "threshold": [0.180124, 0.07338, 0.0, 0.436248, 0.0, 0.0, 0.75, 0.535897, 0.186458, 0.0, 0.0, 0.0, 0.585784, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, 9, -1, -1, -1, 13, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 12, 11, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.043701, 0.0, -0.027711, -0.005392, 0.0, 0.0, 0.0, -0.004535, 0.019972, -0.004535, 0.0, 0.046539, 0.022638],
            },
            {
                "feature": [11, 18, -1, 9, -1, 21, -1, -1, 23, 2, -1, -1, 13, -1, -1],
                "threshold": [0.683817, 0.416237, 0.0, 0.042572, 0.0, 0.604348, 0.0, 0.0, 0.0, 0.75, 0.0, 0.0, 0.710563, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, -1, -1, 9, 10, -1, -1, 13, -1, -1],
                "right": [8, 3, -1, 5, -1, 7, -1, -1, 12, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.046675, 0.0, -0.026869, 0.0, 0.002542, -0.013523, 0.0, 0.0, 0.002542, 0.030416, 0.0, 0.019243, 0.044864],
            },
            {
                "feature": [18, -1, 23, 10, -1, 21, 37, 24, -1, -1, -1, -1, 1, -1, -1],
                "threshold": [0.459076, 0.0, 0.0, 0.280479, 0.0, 0.836022, 0.0, 0.707, 0.0, 0.0, 0.0, 0.0, 0.291667, 0.0, 0.0],
                "left": [1, -1, 3, 4, -1, 6, 7, 8, -1, -1, -1, -1, 13, -1, -1],
                "right": [2, -1, 12, 5, -1, 11, 10, 9, -1, -1, -1, -1, 14, -1, -1],
                "value": [0.0, -0.044607, 0.0, 0.0, -0.018938, 0.0, 0.0, 0.0, 0.043676, 0.011228, -0.006502, -0.006502, 0.0, 0.012567, 0.042026],
            },
            {
                "feature": [13, 18, -1, -1, 2, 21, 11, 10, -1, -1, -1, -1, 24, -1, -1],
                "threshold": [0.268023, 0.904529, 0.0, 0.0, 0.75, 0.535897, 0.683817, 0.173916, 0.0, 0.0, 0.0, 0.0, 0.812847, 0.0, 0.0],
                "left": [1, 2, -1, -1, 5, 6, 7, 8, -1, -1, -1, -1, 13, -1, -1],
                "right": [4, 3, -1, -1, 12, 11, 10, 9, -1, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.042603, -0.007739, 0.0, 0.0, 0.0, 0.0, -0.007739, 0.009648, 0.020056, -0.007739, 0.0, 0.020056, 0.047823],
            },
            {
                "feature": [11, 18, -1, 23, 0, -1, 21, -1, -1, -1, 12, -1, 21, -1, -1],
                "threshold": [0.683817, 0.416237, 0.0, 0.0, 0.039231, 0.0, 0.585784, 0.0, 0.0, 0.0, 0.817653, 0.0, 0.745968, 0.0, 0.0],
                "left": [1, 2, -1, 4, 5, -1, 7, -1, -1, -1, 11, -1, 13, -1, -1],
                "right": [10, 3, -1, 9, 6, -1, 8, -1, -1, -1, 12, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.045373, 0.0, 0.0, -0.026018, 0.0, 0.002406, -0.016576, 0.002406, 0.0, 0.008024, 0.0, 0.041006, 0.020914],
            },
            {
                "feature": [18, -1, 23, 2, -1, 21, 10, -1, -1, -1, 12, 1, -1, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.118056, 0.0, 0.84413, 0.32141, 0.0, 0.0, 0.0, 0.829555, 0.291667, 0.0, 0.0, 0.0],
                "left": [1, -1, 3, 4, -1, 6, 7, -1, -1, -1, 11, 12, -1, -1, -1],
                "right": [2, -1, 10, 5, -1, 9, 8, -1, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, -0.045272, 0.0, 0.0, -0.019785, 0.0, 0.0, -0.007141, 0.019951, -0.007141, 0.0, 0.0, 0.003242, 0.026207, 0.040428],
            },
            {
                "feature": [13, 16, 18, -1, -1, -1, 10, 21, 10, -1, -1, -1, 12, -1, -1],
                "threshold": [0.07338, 0.132867, 0.936446, 0.0, 0.0, 0.0, 0.832449, 0.617216, 0.06274, 0.0, 0.0, 0.0, 0.817653, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, 9, -1, -1, -1, 13, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 12, 11, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.048668, -0.025018, -0.011617, 0.0, 0.0, 0.0, -0.006175, 0.013873, -0.011617, 0.0, 0.013873, 0.035891],
            },
            {
                "feature": [18, -1, 23, 21, 10, -1, -1, 10, -1, -1, 19, 21, -1, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.585784, 0.026924, 0.0, 0.0, 0.850085, 0.0, 0.0, 0.987693, 0.724747, 0.0, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, -1, -1, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [2, -1, 10, 7, 6, -1, -1, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, -0.044416, 0.0, 0.0, 0.0, -0.01955, 0.010105, 0.0, -0.01955, 0.010913, 0.0, 0.0, 0.018811, -0.018434, 0.044608],
            },
            {
                "feature": [12, 18, -1, 21, -1, -1, 11, 2, -1, -1, 21, 2, -1, -1, -1],
                "threshold": [0.138894, 0.688278, 0.0, 0.35389, 0.0, 0.0, 0.692737, 0.225, 0.0, 0.0, 0.424812, 0.75, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, -1, 7, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [6, 3, -1, 5, -1, -1, 10, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.045383, 0.0, -0.009001, -0.029112, 0.0, 0.0, -0.009001, 0.008487, 0.0, 0.0, 0.022868, 0.04652, 0.008487],
            },
            {
                "feature": [18, -1, 23, 37, 21, 0, -1, 2, -1, -1, -1, -1, 12, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.0, 0.836022, 0.225, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0, 0.829555, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, 6, -1, 8, -1, -1, -1, -1, 13, -1, -1],
                "right": [2, -1, 12, 11, 10, 7, -1, 9, -1, -1, -1, -1, 14, -1, -1],
                "value": [0.0, -0.043349, 0.0, 0.0, 0.0, 0.0, -0.005521, 0.0, 0.010421, 0.046449, -0.019213, -0.019213, 0.0, 0.011064, 0.038418],
            },
            {
                "feature": [13, 16, 18, -1, -1, -1, 10, 21, 1, -1, -1, -1, 23, -1, -1],
                "threshold": [0.049765, 0.132867, 0.936446, 0.0, 0.0, 0.0, 0.850085, 0.468627, 0.064583, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, 9, -1, -1, -1, 13, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 12, 11, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.047661, -0.024084, -0.011509, 0.0, 0.0, 0.0, -0.009857, 0.013004, -0.011509, 0.0, 0.016741, 0.038329],
            },
            {
                "feature": [12, 18, -1, -1, 23, 21, 11, 24, -1, -1, -1, -1, 13, -1, -1],
                "threshold": [0.138894, 0.688278, 0.0, 0.0, 0.0, 0.585784, 0.991062, 0.794241, 0.0, 0.0, 0.0, 0.0, 0.768947, 0.0, 0.0],
                "left": [1, 2, -1, -1, 5, 6, 7, 8, -1, -1, -1, -1, 13, -1, -1],
                "right": [4, 3, -1, -1, 12, 11, 10, 9, -1, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.043963, -0.01375, 0.0, 0.0, 0.0, 0.0, 0.010052, -0.0086, 0.02813, -0.0086, 0.0, 0.007722, 0.035371],
            },
            {
                "feature": [18, -1, 23, 37, 21, 0, -1, -1, -1, -1, 9, 21, -1, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.0, 0.836022, 0.416667, 0.0, 0.0, 0.0, 0.0, 0.416667, 0.711982, 0.0, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, 6, -1, -1, -1, -1, 11, 12, -1, -1, -1],
                "right": [2, -1, 10, 9, 8, 7, -1, -1, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, -0.042131, 0.0, 0.0, 0.0, 0.0, -0.003566, 0.024844, -0.018827, -0.018827, 0.0, 0.0, 0.015836, -0.018827, 0.0366],
            },
            {
                "feature": [9, 3, -1, -1, 21, 2, 11, 23, -1, -1, -1, -1, 10, -1, -1],
                "threshold": [0.042572, 0.080128, 0.0, 0.0, 0.617216, 0.75, 0.991062, 0.0, 0.0, 0.0, 0.0, 0.0, 0.850085, 0.0, 0.0],
                "left": [1, 2, -1, -1, 5, 6, 7, 8, -1, -1, -1, -1, 13, -1, -1],
                "right": [4, 3, -1, -1, 12, 11, 10, 9, -1, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.038158, -0.011393, 0.0, 0.0, 0.0, 0.0, -0.003977, 0.013099, 0.022178, 0.03612, 0.0, -0.011393, 0.014423],
            },
            {
                "feature": [18, -1, 23, 21, 10, -1, -1, -1, 13, 37, 0, -1, -1, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.585784, 0.026924, 0.0, 0.0, 0.0, 0.724917, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, -1, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [2, -1, 8, 7, 6, -1, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, -0.041157, 0.0, 0.0, 0.0, -0.018477, 0.009134, -0.018477, 0.0, 0.0, 0.0, -0.013586, 0.019519, 0.019519, 0.031726],
            },
            {
                "feature": [13, 16, 9, -1, -1, -1, 1, 23, -1, 33, -1, -1, 13, -1, -1],
                "threshold": [0.049765, 0.132867, 0.044466, 0.0, 0.0, 0.0, 0.416667, 0.0, 0.0, 0.0, 0.0, 0.0, 0.70394, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, -1, 10, -1, -1, 13, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 12, 9, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.047423, -0.022792, -0.010783, 0.0, 0.0, -0.009239, 0.0, 0.011579, -0.010783, 0.0, 0.011579, 0.031542],
            },
            {
                "feature": [13, 16, -1, -1, 23, 10, 21, -1, -1, -1, 19, 12, -1, -1, -1],
                "threshold": [0.049765, 0.132867, 0.0, 0.0, 0.0, 0.832449, 0.535897, 0.0, 0.0, 0.0, 0.987693, 0.589782, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, -1, 5, 6, 7, -1, -1, -1, 11, 12, -1, -1, -1],
                "right": [4, 3, -1, -1, 10, 9, 8, -1, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.034615, -0.010683, 0.0, 0.0, 0.0, 0.001707, -0.010683, 0.014304, 0.0, 0.0, -0.003779, 0.021007, 0.041955],
            },
            {
                "feature": [18, -1, 23, 21, 37, 0, 13, -1, -1, -1, -1, -1, 19, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.836022, 0.0, 0.416667, 0.09228, 0.0, 0.0, 0.0, 0.0, 0.0, 0.999935, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, 6, 7, -1, -1, -1, -1, -1, 13, -1, -1],
                "right": [2, -1, 12, 11, 10, 9, 8, -1, -1, -1, -1, -1, 14, -1, -1],
                "value": [0.0, -0.040405, 0.0, 0.0, 0.0, 0.0, 0.0, -0.018252, 0.002638, 0.022276, -0.018252, -0.018252, 0.0, 0.012026, 0.041914],
            },
            {
                "feature": [18, -1, 23, 37, 13, -1, 11, -1, -1, -1, 19, 21, -1, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.0, 0.049765, 0.0, 0.963884, 0.0, 0.0, 0.0, 0.999935, 0.724747, 0.0, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, -1, 7, -1, -1, -1, 11, 12, -1, -1, -1],
                "right": [2, -1, 10, 9, 6, -1, 8, -1, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, -0.040258, 0.0, 0.0, 0.0, -0.018232, 0.0, -0.000324, 0.023415, -0.018232, 0.0, 0.0, 0.014754, -0.014021, 0.041119],
            },
            {
                "feature": [21, 12, 18, 12, -1, -1, 9, -1, -1, 11, 19, -1, -1, -1, -1],
                "threshold": [0.924501, 0.561162, 0.688278, 0.026597, 0.0, 0.0, 0.037749, 0.0, 0.0, 0.976616, 0.999935, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, -1, 7, -1, -1, 10, 11, -1, -1, -1, -1],
                "right": [14, 9, 6, 5, -1, -1, 8, -1, -1, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.04863, -0.019408, 0.0, -0.018804, 0.002292, 0.0, 0.0, 0.002767, 0.024123, 0.041092, -0.048105],
            },
            {
                "feature": [23, 21, 37, 13, -1, -1, -1, 26, -1, -1, 13, 18, -1, -1, -1],
                "threshold": [0.0, 0.836022, 0.0, 0.049765, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.724917, 0.732973, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, -1, -1, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 7, 6, 5, -1, -1, -1, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.027273, 0.005923, -0.034393, 0.0, -0.058007, 0.028319, 0.0, 0.0, -0.029277, 0.008498, 0.030783],
            },
            {
                "feature": [23, 21, 37, 1, -1, 2, -1, -1, -1, 26, -1, -1, 13, -1, -1],
                "threshold": [0.0, 0.836022, 0.0, 0.040833, 0.0, 0.118056, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.724917, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, 6, -1, -1, -1, 10, -1, -1, 13, -1, -1],
                "right": [12, 9, 8, 5, -1, 7, -1, -1, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.024336, 0.0, -0.007721, 0.014907, -0.033674, 0.0, -0.056321, 0.026821, 0.0, 0.00144, 0.029324],
            },
            {
                "feature": [13, 18, 16, -1, -1, -1, 23, 24, -1, 1, -1, -1, 19, -1, -1],
                "threshold": [0.268023, 0.904529, 0.468627, 0.0, 0.0, 0.0, 0.0, 0.662122, 0.0, 0.75, 0.0, 0.0, 0.999935, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, -1, 10, -1, -1, 13, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 12, 9, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.042495, -0.020731, -0.006025, 0.0, 0.0, 0.032648, 0.0, -0.006025, 0.01556, 0.0, 0.011303, 0.042157],
            },
            {
                "feature": [12, 21, 1, -1, -1, -1, 1, 0, 21, -1, -1, -1, 13, -1, -1],
                "threshold": [0.134237, 0.302174, 0.051316, 0.0, 0.0, 0.0, 0.416667, 0.416667, 0.535897, 0.0, 0.0, 0.0, 0.70394, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, 9, -1, -1, -1, 13, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 12, 11, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.03689, -0.007197, -0.032936, 0.0, 0.0, 0.0, 0.002938, -0.007197, 0.01067, 0.0, 0.01067, 0.03065],
            },
            {
                "feature": [18, -1, 23, 21, 24, 12, -1, -1, -1, 10, -1, -1, 19, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.563859, 0.847438, 0.855075, 0.0, 0.0, 0.0, 0.850085, 0.0, 0.0, 0.999935, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, 6, -1, -1, -1, 10, -1, -1, 13, -1, -1],
                "right": [2, -1, 12, 9, 8, 7, -1, -1, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, -0.03692, 0.0, 0.0, 0.0, 0.0, -0.00071, 0.028078, -0.016882, 0.0, -0.016882, 0.009087, 0.0, 0.009806, 0.037896],
            },
            {
                "feature": [18, 16, -1, -1, 21, 12, 9, -1, -1, 11, -1, -1, 10, -1, -1],
                "threshold": [0.416237, 0.74569, 0.0, 0.0, 0.617216, 0.829555, 0.042572, 0.0, 0.0, 0.963884, 0.0, 0.0, 0.850085, 0.0, 0.0],
                "left": [1, 2, -1, -1, 5, 6, 7, -1, -1, 10, -1, -1, 13, -1, -1],
                "right": [4, 3, -1, -1, 12, 9, 8, -1, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.043146, -0.016067, 0.0, 0.0, 0.0, -0.016067, 0.005608, 0.0, 0.016006, 0.04686, 0.0, -0.016067, 0.013626],
            },
            {
                "feature": [23, 21, 37, 13, -1, -1, -1, 26, -1, -1, 13, 18, -1, -1, -1],
                "threshold": [0.0, 0.836022, 0.0, 0.049765, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.768947, 0.732973, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, -1, -1, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 7, 6, 5, -1, -1, -1, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.025067, 0.005687, -0.032447, 0.0, -0.055254, 0.026869, 0.0, 0.0, -0.03104, 0.009587, 0.027558],
            },
            {
                "feature": [11, 18, 16, -1, -1, 9, -1, 21, -1, -1, 21, 21, -1, -1, -1],
                "threshold": [0.723685, 0.416237, 0.74569, 0.0, 0.0, 0.042572, 0.0, 0.604348, 0.0, 0.0, 0.424812, 0.051316, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 5, 4, -1, -1, 7, -1, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.042513, -0.019123, 0.0, -0.019123, 0.0, 0.002095, -0.009842, 0.0, 0.0, 0.002095, 0.02924, 0.002095],
            },
            {
                "feature": [23, 18, -1, 37, 24, 10, -1, -1, -1, -1, 21, -1, 13, -1, -1],
                "threshold": [0.0, 0.564783, 0.0, 0.0, 0.697909, 0.296073, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.724917, 0.0, 0.0],
                "left": [1, 2, -1, 4, 5, 6, -1, -1, -1, -1, 11, -1, 13, -1, -1],
                "right": [10, 3, -1, 9, 8, 7, -1, -1, -1, -1, 12, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.036889, 0.0, 0.0, 0.0, -0.009444, 0.041033, -0.004258, -0.020262, 0.0, -0.050547, 0.0, 0.003376, 0.027945],
            },
            {
                "feature": [13, 16, -1, -1, 21, 19, 21, -1, 1, -1, -1, -1, 24, -1, -1],
                "threshold": [0.049765, 0.132867, 0.0, 0.0, 0.546921, 0.999935, 0.096006, 0.0, 0.080128, 0.0, 0.0, 0.0, 0.892235, 0.0, 0.0],
                "left": [1, 2, -1, -1, 5, 6, 7, -1, 9, -1, -1, -1, 13, -1, -1],
                "right": [4, 3, -1, -1, 12, 11, 8, -1, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.029873, -0.008563, 0.0, 0.0, 0.0, -0.008563, 0.0, -0.007967, 0.016929, 0.032427, 0.0, -0.008563, 0.030292],
            },
            {
                "feature": [23, 37, 13, -1, 10, 21, -1, -1, -1, 21, -1, -1, 19, -1, -1],
                "threshold": [0.0, 0.0, 0.049765, 0.0, 0.832449, 0.604348, 0.0, 0.0, 0.0, 0.535897, 0.0, 0.0, 0.987693, 0.0, 0.0],
                "left": [1, 2, 3, -1, 5, 6, -1, -1, -1, 10, -1, -1, 13, -1, -1],
                "right": [12, 9, 4, -1, 8, 7, -1, -1, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.027963, 0.0, 0.0, 0.003505, -0.013071, 0.015948, 0.0, -0.016775, -0.064982, 0.0, 0.005514, 0.035202],
            },
            {
                "feature": [21, 9, 3, -1, -1, 23, 1, -1, -1, 19, 22, -1, -1, -1, -1],
                "threshold": [0.924501, 0.042572, 0.080128, 0.0, 0.0, 0.0, 0.75, 0.0, 0.0, 0.987693, 0.724359, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, 7, -1, -1, 10, 11, -1, -1, -1, -1],
                "right": [14, 5, 4, -1, -1, 9, 8, -1, -1, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.031793, -0.007001, 0.0, 0.0, -0.004505, 0.019128, 0.0, 0.0, 0.004798, 0.023566, 0.037367, -0.040556],
            },
            {
                "feature": [21, 9, -1, 11, -1, 12, -1, -1, 24, 10, 13, -1, -1, -1, -1],
                "threshold": [0.627315, 0.042572, 0.0, 0.991062, 0.0, 0.541087, 0.0, 0.0, 0.892235, 0.802048, 0.863929, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 3, -1, 5, -1, 7, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, -0.021373, 0.0, 0.004893, 0.0, 0.016846, 0.043672, 0.0, 0.0, 0.0, -0.043308, -0.01739, -0.001839, 0.02471],
            },
            {
                "feature": [18, -1, 23, 37, 24, 10, -1, -1, 13, -1, -1, -1, 12, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.0, 0.697909, 0.296073, 0.0, 0.0, 0.935035, 0.0, 0.0, 0.0, 0.74811, 0.0, 0.0],
                "left": [1, -1, 3, 4, 5, 6, -1, -1, 9, -1, -1, -1, 13, -1, -1],
                "right": [2, -1, 12, 11, 8, 7, -1, -1, 10, -1, -1, -1, 14, -1, -1],
                "value": [0.0, -0.032202, 0.0, 0.0, 0.0, 0.0, -0.009071, 0.04224, 0.0, -0.009416, 0.013734, -0.014913, 0.0, 0.004487, 0.024874],
            },
            {
                "feature": [21, 18, 1, -1, -1, 2, 21, -1, -1, -1, 13, 10, -1, -1, -1],
                "threshold": [0.563859, 0.753991, 0.095455, 0.0, 0.0, 0.75, 0.034648, 0.0, 0.0, 0.0, 0.879356, 0.721636, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, 7, -1, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 5, 4, -1, -1, 9, 8, -1, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.03433, -0.004418, 0.0, 0.0, -0.004418, 0.009995, 0.033844, 0.0, 0.0, -0.032648, -0.003726, 0.015112],
            },
            {
                "feature": [21, 0, 31, 1, 2, -1, -1, -1, -1, -1, 24, -1, 22, -1, -1],
                "threshold": [0.901613, 0.416667, 0.0, 0.154762, 0.039231, 0.0, 0.0, 0.0, 0.0, 0.0, 0.773595, 0.0, 0.384615, 0.0, 0.0],
                "left": [1, 2, 3, 4, 5, -1, -1, -1, -1, -1, 11, -1, 13, -1, -1],
                "right": [10, 9, 8, 7, 6, -1, -1, -1, -1, -1, 12, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, 0.0, -0.036689, -0.010197, 0.004259, 0.007392, 0.017833, 0.0, -0.054219, 0.0, -0.045434, 0.019388],
            },
            {
                "feature": [21, 9, 18, -1, -1, 23, -1, 19, -1, -1, 24, -1, 22, -1, -1],
                "threshold": [0.901613, 0.042572, 0.853, 0.0, 0.0, 0.0, 0.0, 0.999935, 0.0, 0.0, 0.773595, 0.0, 0.384615, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, 8, -1, -1, 11, -1, 13, -1, -1],
                "right": [10, 5, 4, -1, -1, 7, -1, 9, -1, -1, 12, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.037055, -0.006865, 0.0, 0.000105, 0.0, 0.008863, 0.038318, 0.0, -0.053182, 0.0, -0.047014, 0.018306],
            },
            {
                "feature": [21, 11, 2, 9, 18, -1, -1, -1, -1, 23, -1, 12, -1, -1, -1],
                "threshold": [0.924501, 0.683817, 0.225, 0.042572, 0.853, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.443141, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, 4, 5, -1, -1, -1, -1, 10, -1, 12, -1, -1, -1],
                "right": [14, 9, 8, 7, 6, -1, -1, -1, -1, 11, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, 0.0, -0.04052, -0.014802, -0.005091, 0.003318, 0.0, 0.0036, 0.0, 0.003318, 0.031617, -0.038041],
            },
            {
                "feature": [13, 18, 16, -1, -1, -1, 21, 2, -1, 0, -1, -1, 24, -1, -1],
                "threshold": [0.268023, 0.904529, 0.468627, 0.0, 0.0, 0.0, 0.585784, 0.75, 0.0, 0.291667, 0.0, 0.0, 0.892235, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, -1, 10, -1, -1, 13, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 12, 9, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.040771, -0.018238, -0.004885, 0.0, 0.0, 0.004844, 0.0, 0.016747, 0.046173, 0.0, -0.004885, 0.026869],
            },
            {
                "feature": [16, 13, 18, -1, -1, 21, 11, 10, -1, -1, -1, 26, -1, -1, -1],
                "threshold": [0.132867, 0.061965, 0.936446, 0.0, 0.0, 0.546921, 0.683817, 0.030973, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, 7, 8, -1, -1, -1, 12, -1, -1, -1],
                "right": [14, 5, 4, -1, -1, 11, 10, 9, -1, -1, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.041949, -0.014366, 0.0, 0.0, 0.0, -0.012804, 0.005481, 0.01618, 0.0, -0.012804, 0.01618, 0.034263],
            },
            {
                "feature": [18, -1, 23, 33, -1, 24, 10, 21, -1, -1, -1, -1, 33, -1, -1],
                "threshold": [0.416237, 0.0, 0.0, 0.0, 0.0, 0.788569, 0.876957, 0.409586, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, -1, 3, 4, -1, 6, 7, 8, -1, -1, -1, -1, 13, -1, -1],
                "right": [2, -1, 12, 5, -1, 11, 10, 9, -1, -1, -1, -1, 14, -1, -1],
                "value": [0.0, -0.029671, 0.0, 0.0, -0.011254, 0.0, 0.0, 0.0, 0.02282, -0.013832, 0.041634, -0.013832, 0.0, 0.016828, -0.007122],
            },
            {
                "feature": [23, 37, 13, -1, -1, 24, -1, -1, 13, 37, 0, -1, -1, -1, -1],
                "threshold": [0.0, 0.0, 0.049765, 0.0, 0.0, 0.743222, 0.0, 0.0, 0.724917, 0.0, 0.75, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 5, 4, -1, -1, 7, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.02527, 0.002087, 0.0, -0.057005, -0.009059, 0.0, 0.0, 0.0, -0.018816, 0.010991, 0.010991, 0.02286],
            },
            {
                "feature": [16, 13, 18, -1, -1, 11, 12, -1, -1, 21, 21, -1, -1, -1, -1],
                "threshold": [0.132867, 0.061965, 0.936446, 0.0, 0.0, 0.683817, 0.868113, 0.0, 0.0, 0.431677, 0.108187, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, 7, -1, -1, 10, 11, -1, -1, -1, -1],
                "right": [14, 5, 4, -1, -1, 9, 8, -1, -1, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.041145, -0.011996, 0.0, 0.0, -0.008929, 0.002759, 0.0, 0.0, 0.002759, 0.015332, 0.002759, 0.032504],
            },
            {
                "feature": [16, 2, 13, -1, -1, 0, 13, -1, 21, -1, -1, 31, -1, -1, -1],
                "threshold": [0.132867, 0.054094, 0.061965, 0.0, 0.0, 0.291667, 0.651848, 0.0, 0.096006, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, 7, -1, 9, -1, -1, 12, -1, -1, -1],
                "right": [14, 5, 4, -1, -1, 11, 8, -1, 10, -1, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.035278, -0.009396, 0.0, 0.0, -0.009089, 0.0, -0.002177, 0.004735, 0.0, 0.014858, 0.004735, 0.031507],
            },
            {
                "feature": [21, 16, 2, -1, 23, 33, -1, 0, -1, -1, 13, -1, -1, -1, -1],
                "threshold": [0.924501, 0.132867, 0.054094, 0.0, 0.0, 0.0, 0.0, 0.183333, 0.0, 0.0, 0.68974, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, 5, 6, -1, 8, -1, -1, 11, -1, -1, -1, -1],
                "right": [14, 13, 4, -1, 10, 7, -1, 9, -1, -1, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.020255, 0.0, 0.0, -0.007732, 0.0, -0.007732, 0.016251, 0.0, 0.001177, 0.016251, 0.032657, -0.0331],
            },
            {
                "feature": [16, 18, -1, 13, -1, 19, 21, 21, 22, -1, -1, -1, -1, -1, -1],
                "threshold": [0.132867, 0.416237, 0.0, 0.061965, 0.0, 0.999935, 0.701852, 0.096006, 0.07906, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1],
                "right": [14, 3, -1, 5, -1, 13, 12, 11, 10, -1, -1, -1, -1, -1, -1],
                "value": [0.0, 0.0, -0.04053, 0.0, -0.019902, 0.0, 0.0, 0.0, 0.0, 0.007499, -0.008055, 0.007499, -0.008055, 0.014128, 0.030035],
            },
            {
                "feature": [23, 37, 24, 10, -1, -1, 13, -1, -1, -1, 29, 21, -1, -1, -1],
                "threshold": [0.0, 0.0, 0.697909, 0.296073, 0.0, 0.0, 0.049765, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, -1, 7, -1, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 9, 6, 5, -1, -1, 8, -1, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.007769, 0.038192, 0.0, -0.030376, -0.002255, -0.030666, 0.0, 0.0, -0.045145, 0.01328, -0.032082],
            },
            {
                "feature": [16, 18, -1, 12, -1, 0, 21, 23, 22, -1, -1, -1, -1, -1, -1],
                "threshold": [0.132867, 0.416237, 0.0, 0.149069, 0.0, 0.416667, 0.704793, 0.0, 0.67735, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1],
                "right": [14, 3, -1, 5, -1, 13, 12, 11, 10, -1, -1, -1, -1, -1, -1],
                "value": [0.0, 0.0, -0.039501, 0.0, -0.01707, 0.0, 0.0, 0.0, 0.0, -0.006316, 0.006962, 0.006962, -0.006316, 0.013838, 0.029563],
            },
            {
                "feature": [16, 13, 18, -1, -1, 2, 21, 1, -1, -1, -1, 21, -1, -1, -1],
                "threshold": [0.132867, 0.061965, 0.936446, 0.0, 0.0, 0.416667, 0.418011, 0.095455, 0.0, 0.0, 0.0, 0.114379, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, 7, 8, -1, -1, -1, 12, -1, -1, -1],
                "right": [14, 5, 4, -1, -1, 11, 10, 9, -1, -1, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.039471, -0.012132, 0.0, 0.0, 0.0, -0.011339, 0.005437, -0.011613, 0.0, 0.005437, 0.013602, 0.02892],
            },
            {
                "feature": [21, 23, 24, 6, -1, -1, -1, 12, -1, -1, 24, 10, -1, -1, -1],
                "threshold": [0.701852, 0.0, 0.847438, 0.118056, 0.0, 0.0, 0.0, 0.737361, 0.0, 0.0, 0.909678, 0.850085, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, -1, -1, 8, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 7, 6, 5, -1, -1, -1, 9, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.001842, 0.040761, -0.032666, 0.0, 0.002561, 0.025351, 0.0, 0.0, -0.030913, 0.004609, 0.03642],
            },
            {
                "feature": [21, 16, 18, -1, 12, -1, 0, -1, -1, -1, 24, -1, 22, -1, -1],
                "threshold": [0.901613, 0.132867, 0.416237, 0.0, 0.149069, 0.0, 0.416667, 0.0, 0.0, 0.0, 0.773595, 0.0, 0.384615, 0.0, 0.0],
                "left": [1, 2, 3, -1, 5, -1, 7, -1, -1, -1, 11, -1, 13, -1, -1],
                "right": [10, 9, 4, -1, 6, -1, 8, -1, -1, -1, 12, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.045325, 0.0, -0.015431, 0.0, 0.001369, 0.01593, 0.03189, 0.0, -0.047616, 0.0, -0.041036, 0.017373],
            },
            {
                "feature": [21, 16, 2, 13, -1, -1, 11, -1, -1, -1, 26, -1, 24, -1, -1],
                "threshold": [0.924501, 0.132867, 0.054094, 0.061965, 0.0, 0.0, 0.991062, 0.0, 0.0, 0.0, 0.0, 0.0, 0.788569, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, -1, 7, -1, -1, -1, 11, -1, 13, -1, -1],
                "right": [10, 9, 6, 5, -1, -1, 8, -1, -1, -1, 12, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.033129, -0.007324, 0.0, 0.001304, 0.014418, 0.028941, 0.0, -0.043424, 0.0, 0.052759, -0.048662],
            },
            {
                "feature": [21, 23, 24, 6, 13, -1, -1, -1, -1, -1, 24, 10, -1, -1, -1],
                "threshold": [0.701852, 0.0, 0.847438, 0.118056, 0.094405, 0.0, 0.0, 0.0, 0.0, 0.0, 0.909678, 0.850085, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, 4, 5, -1, -1, -1, -1, -1, 11, 12, -1, -1, -1],
                "right": [10, 9, 8, 7, 6, -1, -1, -1, -1, -1, 14, 13, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, 0.0, -0.028703, 0.002473, 0.041335, -0.030691, 0.010674, 0.0, 0.0, -0.029058, 0.003749, 0.036889],
            },
            {
                "feature": [18, 22, 21, -1, -1, -1, 21, 21, -1, 31, 0, -1, -1, -1, -1],
                "threshold": [0.853, 0.297009, 0.098387, 0.0, 0.0, 0.0, 0.563859, 0.051316, 0.0, 0.0, 0.416667, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, -1, 7, 8, -1, 10, 11, -1, -1, -1, -1],
                "right": [6, 5, 4, -1, -1, -1, 14, 9, -1, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.003979, -0.052583, -0.003979, 0.0, 0.0, -0.003979, 0.0, 0.0, -0.000844, 0.02559, 0.031933, -0.003979],
            },
            {
                "feature": [16, 13, 9, -1, -1, 2, 21, 26, 18, -1, -1, -1, -1, -1, -1],
                "threshold": [0.132867, 0.061965, 0.044466, 0.0, 0.0, 0.416667, 0.535897, 0.0, 0.781741, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, -1, -1, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1],
                "right": [14, 5, 4, -1, -1, 13, 12, 11, 10, -1, -1, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, -0.038416, -0.0122, 0.0, 0.0, 0.0, 0.0, -0.011066, 0.004811, -0.011066, -0.011066, 0.011647, 0.024844],
            },
            {
                "feature": [21, 9, -1, 11, -1, 12, -1, -1, 24, 10, 3, -1, -1, -1, -1],
                "threshold": [0.701852, 0.042572, 0.0, 0.991062, 0.0, 0.541087, 0.0, 0.0, 0.909678, 0.850085, 0.416667, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, -1, -1, 9, 10, 11, -1, -1, -1, -1],
                "right": [8, 3, -1, 5, -1, 7, -1, -1, 14, 13, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, -0.014812, 0.0, 0.002596, 0.0, 0.011372, 0.034079, 0.0, 0.0, 0.0, -0.036547, -0.012522, 0.002988, 0.036156],
            },
            {
                "feature": [16, 18, -1, 13, -1, 24, 33, -1, -1, 21, -1, 13, -1, -1, -1],
                "threshold": [0.132867, 0.416237, 0.0, 0.061965, 0.0, 0.743222, 0.0, 0.0, 0.0, 0.129734, 0.0, 0.603895, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, 7, -1, -1, 10, -1, 12, -1, -1, -1],
                "right": [14, 3, -1, 5, -1, 9, 8, -1, -1, 11, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.036953, 0.0, -0.018216, 0.0, 0.0, -0.007493, 0.011191, 0.0, -0.002914, 0.0, -0.003507, 0.011191, 0.023894],
            },
            {
                "feature": [23, 37, 24, 10, -1, -1, 13, -1, 24, -1, 24, -1, -1, -1, -1],
                "threshold": [0.0, 0.0, 0.697909, 0.296073, 0.0, 0.0, 0.049765, 0.0, 0.743222, 0.0, 0.788569, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, -1, 7, -1, 9, -1, 11, -1, -1, -1, -1],
                "right": [14, 13, 6, 5, -1, -1, 8, -1, 10, -1, 12, -1, -1, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.005276, 0.035409, 0.0, -0.029545, 0.0, -0.015479, 0.0, 0.020229, -0.005835, -0.02883, 0.007543],
            },
            {
                "feature": [16, 18, -1, 13, -1, 21, 19, 26, -1, -1, -1, 26, -1, -1, -1],
                "threshold": [0.132867, 0.416237, 0.0, 0.061965, 0.0, 0.546921, 0.954355, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, 7, 8, -1, -1, -1, 12, -1, -1, -1],
                "right": [14, 3, -1, 5, -1, 11, 10, 9, -1, -1, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.036394, 0.0, -0.017957, 0.0, 0.0, 0.0, 0.003359, -0.007415, 0.010674, 0.0, -0.007415, 0.010674, 0.022832],
            },
            {
                "feature": [13, 18, 16, 21, -1, 21, -1, -1, -1, 21, -1, -1, 21, -1, -1],
                "threshold": [0.879356, 0.904529, 0.468627, 0.039352, 0.0, 0.382784, 0.0, 0.0, 0.0, 0.563859, 0.0, 0.0, 0.121324, 0.0, 0.0],
                "left": [1, 2, 3, 4, -1, 6, -1, -1, -1, 10, -1, -1, 13, -1, -1],
                "right": [12, 9, 8, 5, -1, 7, -1, -1, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, 0.0, 0.0, -0.015807, 0.0, -0.044816, -0.018958, -0.008008, 0.0, 0.003648, -0.008008, 0.0, 0.003648, 0.021331],
            },
            {
                "feature": [16, 18, -1, 13, -1, 21, 21, 22, -1, -1, -1, 26, -1, -1, -1],
                "threshold": [0.132867, 0.416237, 0.0, 0.061965, 0.0, 0.468627, 0.096006, 0.34188, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, 7, 8, -1, -1, -1, 12, -1, -1, -1],
                "right": [14, 3, -1, 5, -1, 11, 10, 9, -1, -1, -1, 13, -1, -1, -1],
                "value": [0.0, 0.0, -0.035657, 0.0, -0.01766, 0.0, 0.0, 0.0, 0.010904, -0.007444, 0.010904, 0.0, -0.007444, 0.010904, 0.023345],
            },
            {
                "feature": [16, 18, -1, 12, -1, 11, 24, -1, -1, 31, -1, -1, 21, -1, -1],
                "threshold": [0.132867, 0.416237, 0.0, 0.149069, 0.0, 0.683817, 0.845319, 0.0, 0.0, 0.0, 0.0, 0.0, 0.054094, 0.0, 0.0],
                "left": [1, 2, -1, 4, -1, 6, 7, -1, -1, 10, -1, -1, 13, -1, -1],
                "right": [12, 3, -1, 5, -1, 9, 8, -1, -1, 11, -1, -1, 14, -1, -1],
                "value": [0.0, 0.0, -0.034562, 0.0, -0.014537, 0.0, 0.0, 0.003437, -0.005553, 0.0, 0.010426, 0.003437, 0.0, 0.010426, 0.031403],
            },
        ],
    },
}
