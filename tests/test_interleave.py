"""Team-draft interleaving (`serve.interleave`) and the credit of one recall: the draft is fair
between the teams, shows an item once, is reproducible from its seed, and never longer than asked;
the credit is the sign of (trial's used − live's used)."""

from __future__ import annotations

from automemo.serve.interleave import LIVE, TRIAL, credit, team_draft
from automemo.serve.storage.recall_log import LoggedRecall
from automemo.serve.storage.trials import TrialCounts, trial_counts


def test_each_team_drafts_its_own_best_in_turn_and_the_picks_stay_even():
    live, trial = list("abcdef"), list("uvwxyz")
    for seed in range(50):
        drafted = team_draft(live, trial, 6, f"r{seed}")
        assert len(drafted.items) == 6
        assert drafted.teams.count(LIVE) == drafted.teams.count(TRIAL) == 3
        # each team's items in its own order, its best first
        assert [i for i, t in zip(drafted.items, drafted.teams) if t == LIVE] == live[:3]
        assert [i for i, t in zip(drafted.items, drafted.teams) if t == TRIAL] == trial[:3]
        # after every pair of picks the teams are even (team-draft's fairness)
        for cut in range(2, 7, 2):
            assert drafted.teams[:cut].count(LIVE) == cut // 2


def test_the_coin_gives_the_first_pick_to_either_team_alike():
    firsts = [team_draft(["a"], ["b"], 1, f"recall-{n}").teams[0] for n in range(400)]
    assert 160 < firsts.count(TRIAL) < 240


def test_an_item_both_rank_is_shown_once_for_the_team_that_picked_it():
    drafted = team_draft(["a", "b", "c"], ["a", "c", "d"], 3, "x")
    assert len(set(drafted.items)) == len(drafted.items) == 3
    team = drafted.team_of()
    assert team["a"] == drafted.teams[0]
    # identical lists: the interleave is that list, whoever picks
    same = team_draft(list("abcd"), list("abcd"), 4, "y")
    assert same.items == tuple("abcd")


def test_it_is_reproducible_by_its_seed_and_no_longer_than_the_live_list():
    one = team_draft(list("abcde"), list("vwxyz"), 5, "recall-7")
    assert one == team_draft(list("abcde"), list("vwxyz"), 5, "recall-7")
    assert any(team_draft(list("abcde"), list("vwxyz"), 5, f"recall-{n}") != one for n in range(8))
    assert len(team_draft(list("ab"), list("vwxyz"), 2, "s").items) == 2
    # one list runs out: the other fills the rest
    drafted = team_draft(["a"], list("vwx"), 3, "s")
    assert set(drafted.items) == {"a", "v", "w"} and drafted.teams.count(TRIAL) == 2
    assert team_draft([], list("vwx"), 0, "s").items == ()


def test_credit_is_the_sign_of_trial_used_minus_live_used():
    team = {"a": LIVE, "b": TRIAL, "c": TRIAL, "d": LIVE}
    assert credit(team, ["b"]) == 1
    assert credit(team, ["a"]) == -1
    assert credit(team, ["a", "b"]) == 0
    assert credit(team, ["a", "b", "c"]) == 1
    assert credit(team, []) == 0


def test_counts_read_a_recall_log_for_one_trial_only():
    def recall(rid, shown, teams, used, trial="t"):
        return LoggedRecall(rid, 0.0, "q", tuple(shown), used=None if used is None else tuple(used),
                            teams=tuple(teams), trial=trial)

    log = [recall("1", "ab", [LIVE, TRIAL], "b"), recall("2", "ab", [TRIAL, LIVE], "b"),
           recall("3", "ab", [LIVE, TRIAL], ""), recall("4", "ab", [LIVE, TRIAL], None),
           recall("5", "ab", [LIVE, TRIAL], "b", trial="other"), LoggedRecall("6", 0.0, "q", ("a",), used=("a",))]
    assert trial_counts(log, "t") == TrialCounts(recalls=4, wins=1, losses=1, ties=1)
