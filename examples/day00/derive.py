"""derive: Day 0's derived facts and its one verdict (litkit's gather calls
derive(facts, evidence) through the Makefile's DERIVE).

derive returns {name: (value, [the names of the facts it read])}; each name
must be a "derived" row of schema.tsv. A fact it needs that is missing
gives no value: the page says "not yet measured"."""


def derive(facts, evidence):
    """saxpy.ratio and verdict.linear from the measured times."""
    names = ["saxpy.1000000.us", "saxpy.1000.us"]
    if not all(n in facts for n in names):
        return {}
    ratio = facts[names[0]].value / facts[names[1]].value
    return {"saxpy.ratio": (ratio, names),
            "verdict.linear": ("held" if 100 <= ratio <= 10000 else "failed",
                               names)}
