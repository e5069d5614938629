"""Synthetic contracts: the dev set (200 cases) and the holdout set (120 cases).

Each case is one short contract, ``{"id", "stratum", "text", "expected": {"clause": NAME or
null}}``, where NAME is the jurisdiction whose law governs the contract and ``null`` means the
contract does not say. ``stratum`` is the contract type (supply, services, nda, lease,
employment), which the system never sees.

What varies between cases is mostly *how* the governing-law clause is written. Each case is
drawn from one **kind** of clause, and the kinds are what the prompt versions handle or miss:

================  =====================================================================
kind              how the clause reads
================  =====================================================================
standard          "This Agreement shall be governed by the laws of the State of X." and
                  its usual variants (capitalised, "and construed in accordance with",
                  "without regard to its conflict of laws rules", singular "law")
no_clause         no choice of law at all (expected ``null``), only a forum clause
compliance        a standard clause, plus a later "comply with the data protection law of Y"
reversed          "The laws of X govern this Agreement."
heading           "Governing Law: X."
adjective         "governed by English law", "governed by New York law"
abbreviation      "governed by the laws of the State of N.Y."
amendment         a standard clause for X, amended at the end to Y (expected Y)
alias_gap         "the laws of the Republic of Ireland" (a way of writing Ireland the
                  prompts never learn)
rare:Txx          one of many idiosyncratic phrasings ("interpreted under the internal
                  laws of X", "Choice of law: X", ...); see RARE below
hard              the clause names no place but a rule for finding it ("the laws of the
                  jurisdiction in which the Supplier is incorporated"); the answer is
                  elsewhere in the text
================  =====================================================================

How many cases of each kind each set holds is fixed (PLANS below); that is what makes the
example reproduce the gap chapter's figures exactly with the extractor's real outputs. Every
other choice (the parties, places, dates, the other clauses, which case is which) is drawn
with NumPy's PCG64 generator, seeded per set and per case, so the files are byte-identical on
every build. The two sets are drawn alike: the same kinds at close to the same rates, the same
contract types at close to the same proportions. What differs is which *idiosyncratic*
phrasings each set happens to contain: the dev set's rare phrasings are the ones the team
wrote rules for, because they were the dev set's failures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SEED = 20250901

# The world's jurisdictions: how each is written in contracts.
# long: after "the laws of"; short: bare; adj: before "law"; abbr: an abbreviated long form.
JURISDICTIONS: dict[str, dict[str, object]] = {
    "New York": {"long": "the State of New York", "short": "New York", "adj": "New York", "abbr": "the State of N.Y.",
                 "cities": ("Albany", "Buffalo", "Rochester"), "form": ("Inc.", "LLC")},
    "Delaware": {"long": "the State of Delaware", "short": "Delaware", "adj": "Delaware", "abbr": "the State of Del.",
                 "cities": ("Wilmington", "Dover"), "form": ("Inc.", "LLC")},
    "California": {"long": "the State of California", "short": "California", "adj": "California", "abbr": "the State of Cal.",
                   "cities": ("San Francisco", "Los Angeles", "San Diego"), "form": ("Inc.", "LLC")},
    "Texas": {"long": "the State of Texas", "short": "Texas", "adj": "Texas", "abbr": "the State of Tex.",
              "cities": ("Austin", "Houston", "Dallas"), "form": ("Inc.", "LLC")},
    "Massachusetts": {"long": "the Commonwealth of Massachusetts", "short": "Massachusetts", "adj": "Massachusetts",
                      "abbr": "the Commonwealth of Mass.", "cities": ("Boston", "Cambridge", "Worcester"), "form": ("Inc.", "LLC")},
    "England and Wales": {"long": "England and Wales", "short": "England and Wales", "adj": "English", "abbr": None,
                          "cities": ("London", "Manchester", "Cardiff"), "form": ("Ltd", "plc")},
    "Scotland": {"long": "Scotland", "short": "Scotland", "adj": "Scots", "abbr": None,
                 "cities": ("Edinburgh", "Glasgow", "Aberdeen"), "form": ("Ltd",)},
    "Ireland": {"long": "Ireland", "short": "Ireland", "adj": "Irish", "abbr": None,
                "cities": ("Dublin", "Cork", "Galway"), "form": ("Limited", "DAC")},
    "Ontario": {"long": "the Province of Ontario", "short": "Ontario", "adj": "Ontario", "abbr": "the Province of Ont.",
                "cities": ("Toronto", "Ottawa", "Hamilton"), "form": ("Inc.", "Corp.")},
    "Singapore": {"long": "the Republic of Singapore", "short": "Singapore", "adj": "Singapore", "abbr": None,
                  "cities": ("Singapore",), "form": ("Pte. Ltd.",)},
}
PLACES = tuple(JURISDICTIONS)
# Written "X law" with the jurisdiction's bare name (so a rule with {place} law matches it
# before the prompt learns the adjectives English, Scots, Irish).
SAME_ADJECTIVE = tuple(name for name, j in JURISDICTIONS.items() if j["adj"] == j["short"])
ABBREVIATED = tuple(name for name, j in JURISDICTIONS.items() if j["abbr"] is not None)

STRATA = ("supply", "services", "nda", "lease", "employment")

# Idiosyncratic phrasings. {long}/{short}/{adj} are the governed jurisdiction's forms.
RARE: dict[str, str] = {
    # Dev-set phrasings, each given its own rule by one of the intermediate prompt versions.
    "T01": "This Agreement shall be interpreted under the internal laws of {long}.",
    "T02": "This contract is subject to the laws of {long}.",
    "T03": "This Agreement is construed according to the laws of {long}.",
    "T04": "This Agreement shall be goverened by the laws of {long}.",
    "T05": "All matters arising under this Agreement are to be decided under the laws of {long}.",
    "T06": "This Agreement falls under the laws of {long}.",
    "T07": "This Agreement takes effect under, and is to be interpreted by, the laws of {long}.",
    "T08": "The laws in force in {long} apply to this Agreement.",
    "T09": "Choice of law: {long}.",
    "T10": "This Agreement will be read in accordance with {adj} law.",
    "T11": "The parties choose the laws of {long} to govern this Agreement.",
    "T12": "Questions of interpretation are a matter for the laws of {long}.",
    "T13": "This Agreement is made under the laws of {long}.",
    "T14": "Rights and obligations under this Agreement are determined by {adj} law.",
    "T15": "The governing jurisdiction for this Agreement is {long}.",
    # Dev-set phrasings with "the law of X": one broad rule (extract-v6) catches all four.
    "B1": "The substantive law of {long} shall apply.",
    "B2": "The law of {long} governs this Agreement.",
    "B3": "Any question under this Agreement shall be determined in accordance with the law of {long}.",
    "B4": "The proper law of this Agreement is the law of {long}.",
    # Dev-set phrasings no version gets to.
    "U1": "Legal questions under this Agreement shall be answered under the laws of {long}.",
    "U2": "This Agreement is to be read under the legal order applicable in {long}.",
    # Holdout phrasings: near misses of dev rules, and phrasings the dev set never shows.
    "X04": "This Agreement shall be govemed by the laws of {long}.",
    "X10": "This Agreement will be read in accordance with the laws of {long}.",
    "H01": "This Agreement is to be interpreted in line with the laws of {long}.",
    "H02": "The parties submit this Agreement to the laws of {long}.",
    "H03": "This Agreement is regulated by the laws of {long}.",
    "H04": "Everything in this Agreement is to be understood under the laws of {long}.",
    "H05": "Applicable law: {long}.",
    "H06": "This Agreement follows the laws of {long}.",
    "H07": "The legal system of {long} applies to this Agreement.",
    "H08": "The parties have agreed on {adj} law for this Agreement.",
    "H09": "This Agreement is subject to {adj} law.",
}
HEADLESS = frozenset({"T09", "H05"})  # phrasings that are their own section heading

# (kind, count) per set. The rare phrasings are listed one by one ("rare:T02" twice in dev).
PLANS: dict[str, dict[str, int]] = {
    "dev": {
        "standard": 136, "no_clause": 6, "compliance": 2, "reversed": 5, "heading": 3, "adjective": 3,
        "abbreviation": 2, "amendment": 2, "hard": 18,
        **{f"rare:T{k:02d}": 2 if k in (2, 4) else 1 for k in range(1, 16)},
        "rare:B1": 1, "rare:B2": 1, "rare:B3": 1, "rare:B4": 1, "rare:U1": 1, "rare:U2": 1,
    },
    "holdout": {
        "standard": 76, "no_clause": 4, "compliance": 5, "reversed": 3, "heading": 2, "adjective": 1,
        "abbreviation": 1, "amendment": 1, "alias_gap": 1, "hard": 12,
        "rare:B2": 1, "rare:T02": 2, "rare:X04": 1, "rare:X10": 1, **{f"rare:H{k:02d}": 1 for k in range(1, 10)},
    },
}
STRATUM_COUNTS: dict[str, dict[str, int]] = {
    "dev": {"supply": 60, "services": 50, "nda": 40, "lease": 30, "employment": 20},
    "holdout": {"supply": 38, "services": 29, "nda": 24, "lease": 17, "employment": 12},
}
SET_CODES = {"dev": 1, "holdout": 2}
ID_PREFIX = {"dev": "dev", "holdout": "hold"}

STEMS = ("Norvale", "Harbor", "Kestrel", "Brightwater", "Aldous", "Corvid", "Meridian", "Tamsin", "Oakhurst", "Bellweather",
         "Quillon", "Saffron", "Ironbridge", "Lumen", "Pinecrest", "Redfern", "Sable", "Tidewell", "Vantage", "Wrenfield")
TRADES = ("Components", "Foods", "Logistics", "Analytics", "Systems", "Textiles", "Pharma", "Robotics", "Media", "Energy")
FIRST = ("Ana", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Liam", "Maya", "Noor")
LAST = ("Adeyemi", "Brennan", "Costa", "Dubois", "Eriksen", "Fischer", "Gallagher", "Haddad", "Ivanova", "Jensen", "Kowalski")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")
STREETS = ("Harbour Street", "Mill Lane", "King Street", "Station Road", "Market Square", "Bridge Street", "Elm Avenue")
ROLES = {
    "supply": ("SUPPLY AGREEMENT", "Supplier", "Buyer"),
    "services": ("MASTER SERVICES AGREEMENT", "Provider", "Client"),
    "nda": ("MUTUAL NON-DISCLOSURE AGREEMENT", "Discloser", "Recipient"),
    "lease": ("COMMERCIAL LEASE", "Landlord", "Tenant"),
    "employment": ("EMPLOYMENT AGREEMENT", "Employer", "Employee"),
}


@dataclass(frozen=True)
class Case:
    id: str
    stratum: str
    kind: str
    text: str
    expected: str | None

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "stratum": self.stratum, "text": self.text, "expected": {"clause": self.expected}}


class Draw:
    """Choices from one case's own generator stream (PCG64; never the `random` module)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def pick(self, options: tuple[str, ...] | list[str]) -> str:
        return str(options[int(self.rng.integers(len(options)))])

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def number(self, options: tuple[int, ...]) -> int:
        return int(options[int(self.rng.integers(len(options)))])

    def other(self, *avoid: str) -> str:
        return self.pick([place for place in PLACES if place not in avoid])


def form(place: str, key: str) -> str:
    value = JURISDICTIONS[place][key]
    assert isinstance(value, str)
    return value


def _company(d: Draw, place: str) -> str:
    forms = JURISDICTIONS[place]["form"]
    assert isinstance(forms, tuple)
    return f"{d.pick(STEMS)} {d.pick(TRADES)} {d.pick(forms)}"


def _described(d: Draw, place: str, *, laws: bool) -> str:
    """A party, with the place it is incorporated in ("organized under the laws of" when laws)."""
    name = _company(d, place)
    if laws:
        return f"{name}, a company organized under the laws of {form(place, 'long')}"
    if place in SAME_ADJECTIVE and place != "Singapore" and d.chance(0.5):
        return f"{name}, a {form(place, 'short')} corporation"
    return f"{name}, a company incorporated in {form(place, 'short')}"


def _city(d: Draw, place: str) -> str:
    cities = JURISDICTIONS[place]["cities"]
    assert isinstance(cities, tuple)
    return d.pick(cities)


def _clause_sentence(d: Draw, kind: str, place: str) -> str:
    """The governing-law sentence of a case of ``kind`` governed by ``place``."""
    long, short, adj = form(place, "long"), form(place, "short"), form(place, "adj")
    if kind in ("standard", "compliance", "amendment"):
        variants = [
            f"This Agreement shall be governed by the laws of {long}.",
            f"This Agreement shall be governed by and construed in accordance with the laws of {long}.",
            f"This Agreement and any dispute arising out of it shall be governed by the laws of {long}, "
            "without regard to its conflict of laws rules.",
            f"This Agreement is governed by the laws of {d.pick((long, short))}.",
            f"This Agreement shall be Governed by the Laws of {long}.",
        ]
        if kind == "standard":
            variants.append(f"This Agreement shall be governed by the law of {long}.")
        weights = np.array([30, 25, 20, 15, 10, 10][: len(variants)], dtype=float)
        return variants[int(d.rng.choice(len(variants), p=weights / weights.sum()))]
    if kind == "reversed":
        return d.pick((f"The laws of {long} govern this Agreement.",
                       f"The laws of {long} shall govern this Agreement and any claim arising under it."))
    if kind == "heading":
        return d.pick((f"Governing Law: {long}.", f"Governing law — {short}."))
    if kind == "adjective":
        return d.pick((f"This Agreement is governed by {adj} law.", f"This Agreement shall be governed by {adj} law."))
    if kind == "abbreviation":
        return f"This Agreement shall be governed by the laws of {form(place, 'abbr')}"  # the abbreviation ends the sentence
    if kind == "alias_gap":
        return "This Agreement shall be governed by the laws of the Republic of Ireland."
    if kind.startswith("rare:"):
        return RARE[kind[5:]].format(long=long, short=short, adj=adj)
    raise ValueError(f"no clause sentence for kind {kind!r}")


_REFERENCE = {  # hard cases: the clause names a rule for finding the place, not the place
    "supply": "This Agreement shall be governed by the laws of the jurisdiction in which the {role} is incorporated.",
    "services": "This Agreement shall be governed by the laws of the jurisdiction in which the {role} is incorporated.",
    "nda": "This Agreement shall be governed by the laws of the jurisdiction in which the {role} is incorporated.",
    "lease": "This Lease shall be governed by the law of the place where the Premises are located.",
    "employment": "This Agreement shall be governed by the laws of the jurisdiction in which the Employee habitually works.",
}


def _place_for(d: Draw, kind: str, set_name: str) -> str:
    if kind == "rare:T02":
        return "Singapore" if set_name == "dev" else d.other("Singapore")
    if kind in ("rare:T10", "rare:T14"):
        return d.pick(SAME_ADJECTIVE)
    if kind == "abbreviation":
        return d.pick(ABBREVIATED)
    if kind == "alias_gap":
        return "Ireland"
    return d.pick(PLACES)


def _body(d: Draw, stratum: str, roles: tuple[str, str], work: str | None, premises: str | None) -> list[tuple[str, str]]:
    a, b = roles
    notice = d.pick(("one month's", "two months'", "three months'"))
    pool: dict[str, list[tuple[str, str]]] = {
        "supply": [
            ("Supply", f"{a} shall supply the Products listed in Schedule 1 in the quantities {b} orders."),
            ("Price and Payment", f"{b} shall pay each invoice within {d.number((30, 45, 60))} days of receipt."),
            ("Delivery", f"Delivery is {d.pick(('EXW', 'DAP', 'FCA'))} at {a}'s warehouse unless agreed otherwise."),
            ("Warranty", f"{a} warrants that the Products conform to the Specification for {d.number((12, 18, 24))} months."),
            ("Term and Termination", f"This Agreement runs for {d.number((2, 3))} years; either party may terminate it on "
                                     f"{d.number((60, 90))} days' written notice."),
        ],
        "services": [
            ("Services", f"{a} shall perform the Services described in each Statement of Work."),
            ("Fees", f"{b} shall pay the fees monthly in arrears within {d.number((30, 45))} days of invoice."),
            ("Service Levels", f"{a} shall meet the service levels in Schedule 2 in each calendar month."),
            ("Intellectual Property", f"Deliverables become the property of {b} on payment in full."),
            ("Term and Termination", f"Either party may terminate this Agreement on {d.number((30, 60, 90))} days' notice."),
        ],
        "nda": [
            ("Confidential Information", "Confidential Information means any information disclosed by one party to the other."),
            ("Obligations", f"The {b} shall use Confidential Information only to evaluate the proposed transaction."),
            ("Exclusions", "These obligations do not apply to information that is or becomes public."),
            ("Term", f"The obligations under this Agreement last {d.number((2, 3, 5))} years from the date above."),
            ("Return of Materials", f"On request the {b} shall return or destroy all Confidential Information."),
        ],
        "lease": [
            ("Premises", premises or f"The Premises are Unit {d.number((2, 4, 7, 12))}, {d.pick(STREETS)}."),
            ("Rent", f"The Tenant shall pay rent of {d.number((1800, 2400, 3100, 4500))} per month in advance."),
            ("Term", f"The term is {d.number((3, 5, 10))} years from the date above."),
            ("Repairs", "The Tenant shall keep the interior of the Premises in good repair."),
            ("Use", "The Premises may be used only as offices."),
        ],
        "employment": [
            ("Position", f"The Employee is employed as {d.pick(('Analyst', 'Engineer', 'Account Manager', 'Designer'))}."),
            ("Place of Work", work or "The Employee works from the Employer's main office."),
            ("Salary", f"The Employer shall pay a salary of {d.number((42000, 55000, 68000, 81000))} per year in monthly instalments."),
            ("Hours", "Normal working hours are 9:00 to 17:30, Monday to Friday."),
            ("Notice", f"Either party may end the employment on {notice} written notice."),
        ],
    }
    sections = pool[stratum]
    keep = sorted(int(i) for i in d.rng.choice(len(sections), size=d.number((3, 4, 5)), replace=False))
    must = {"lease": "Premises", "employment": "Place of Work"}.get(stratum)
    chosen = [sections[i] for i in keep]
    if must is not None and all(title != must for title, _ in chosen):
        chosen.insert(0, next(section for section in sections if section[0] == must))
    return chosen


def make_case(set_name: str, index: int, kind: str, stratum: str) -> Case:
    """Case number ``index`` (1-based) of ``set_name``: a contract of ``stratum`` whose clause is of ``kind``."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([SEED, SET_CODES[set_name], index])))
    d = Draw(rng)
    title, role_a, role_b = ROLES[stratum]
    place = _place_for(d, kind, set_name)
    expected: str | None = None if kind == "no_clause" else place

    # The parties. They are incorporated elsewhere than the governing law, except that in a hard
    # supply/services/nda case the clause points at one party's place of incorporation.
    referenced = role_b if d.chance(0.85) else role_a
    places = {role_a: d.other(place), role_b: d.other(place)}
    if kind == "hard" and stratum in ("supply", "services", "nda"):
        places[referenced] = place
    laws_form = {role: d.chance(0.4) for role in (role_a, role_b)}
    if kind == "no_clause":
        laws_form[role_a] = True  # so a catch-all "laws of X" rule has something to get wrong
    if kind == "hard":
        laws_form[referenced] = False
    work = premises = None
    if kind == "hard" and stratum == "lease":
        premises = f"The Premises are located at {d.number((3, 8, 15, 21))} {d.pick(STREETS)}, {_city(d, place)}, {form(place, 'short')}."
    if kind == "hard" and stratum == "employment":
        work = f"The Employee will habitually work at the Employer's office in {_city(d, place)}, {form(place, 'short')}."
    if stratum == "employment":
        person = f"{d.pick(FIRST)} {d.pick(LAST)}"
        parties = f"{_described(d, places[role_a], laws=laws_form[role_a])} (the \"{role_a}\") and {person} (the \"{role_b}\")"
    else:
        parties = (f"{_described(d, places[role_a], laws=laws_form[role_a])} (the \"{role_a}\") and "
                   f"{_described(d, places[role_b], laws=laws_form[role_b])} (the \"{role_b}\")")
    date = f"{d.number(tuple(range(1, 29)))} {d.pick(MONTHS)} {d.number((2023, 2024, 2025))}"
    lines = [title, f"This {title.title()} (the \"Agreement\") is made on {date} between {parties}."]
    sections = _body(d, stratum, (role_a, role_b), work, premises)

    if kind == "compliance":
        law = d.pick(("data protection", "export control", "anti-bribery"))
        sections.append(("Compliance", f"Each party shall comply with the {law} law of {form(d.other(place), 'long')}."))
    venue = d.chance(0.6) or kind == "no_clause"
    venue_place = place if (kind != "no_clause" and d.chance(0.5)) else d.other(place)
    venue_text = f"The courts of {form(venue_place, 'long')} have exclusive jurisdiction over any dispute arising out of this Agreement."
    if kind == "no_clause":
        sections.append(("Disputes", venue_text))
    else:
        if kind == "hard":
            sentence = _REFERENCE[stratum].format(role=referenced)
        else:
            sentence = _clause_sentence(d, kind, place)
        headless = kind == "heading" or kind[5:] in HEADLESS
        heading = "" if headless else d.pick(("Governing Law", "Applicable Law", "Law and Jurisdiction", "Miscellaneous"))
        law_section = len(sections) + 1
        if venue and heading and d.chance(0.5):
            sections.append((heading, f"{sentence} {venue_text}"))
        else:
            sections.append((heading, sentence))
            if venue:
                sections.append(("Disputes", venue_text))
    for number, (heading, sentence) in enumerate(sections, start=1):
        lines.append(f"{number}. {heading}. {sentence}" if heading else f"{number}. {sentence}")
    if kind == "amendment":
        amended = d.other(place)
        expected = amended
        lines.append(
            f"Amendment No. 1, dated {d.number(tuple(range(1, 29)))} {d.pick(MONTHS)} 2025: clause {law_section} is "
            f"amended so that this Agreement is governed by the laws of {form(amended, 'long')}."
        )
    lines.append(f"Signed for the {role_a} and the {role_b}.")
    return Case(id=f"{ID_PREFIX[set_name]}-{index:04d}", stratum=stratum, kind=kind, text="\n".join(lines), expected=expected)


def make_set(set_name: str) -> list[Case]:
    """Every case of ``set_name`` ("dev" or "holdout"), in file order."""
    plan = PLANS[set_name]
    kinds = [kind for kind, count in plan.items() for _ in range(count)]
    strata = [stratum for stratum, count in STRATUM_COUNTS[set_name].items() for _ in range(count)]
    if len(kinds) != len(strata):
        raise AssertionError(f"{set_name}: the kinds plan has {len(kinds)} cases, the strata plan {len(strata)}")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([SEED, SET_CODES[set_name], 0])))
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]
    strata = [strata[i] for i in rng.permutation(len(strata))]
    return [make_case(set_name, index, kind, stratum) for index, (kind, stratum) in enumerate(zip(kinds, strata, strict=True), start=1)]
