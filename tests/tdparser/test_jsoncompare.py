"""The JSON comparator the differential tests rely on: it must ignore anonymous numbering and
nothing else."""

from __future__ import annotations

import json
import random
import re

import pytest
from jsoncompare import canonical_names, diff_documents, first_difference
from oracle import llvm_json


def rec(name, anon=False, locs=("a.td:1",), supers=(), **fields):
    return {"!name": name, "!anonymous": anon, "!fields": [], "!locs": list(locs),
            "!superclasses": list(supers), **fields}


def ref(name):
    return {"kind": "def", "def": name, "printable": name}


def doc(*records, instanceof=None):
    out = {"!tablegen_json_version": 1, "!instanceof": instanceof or {}}
    for r in records:
        out[r["!name"]] = r
    return out


def renumber(document: dict, seed: int) -> dict:
    text = json.dumps(document)
    names = sorted(set(re.findall(r"anonymous_\d+", text)))
    shuffled = names[:]
    random.Random(seed).shuffle(shuffled)
    mapping = dict(zip(names, shuffled))
    return json.loads(re.sub(r"anonymous_\d+", lambda m: mapping[m.group(0)], text))


SAMPLE = doc(
    rec("anonymous_0", True, supers=["P"], v=1),
    rec("anonymous_1", True, supers=["P"], v=2),
    rec("anonymous_2", True, supers=["And"], children=[ref("anonymous_0"), ref("anonymous_1")]),
    rec("anonymous_3", True, supers=["And"], children=[ref("anonymous_1"), ref("anonymous_0")]),
    # a cycle through two anonymous records
    rec("anonymous_4", True, locs=["b.td:2"], next=ref("anonymous_5")),
    rec("anonymous_5", True, locs=["b.td:3"], next=ref("anonymous_4")),
    rec("X", pred=ref("anonymous_2"), other=ref("anonymous_3"), s="uses anonymous_4 inside",
        d={"kind": "dag", "operator": ref("anonymous_5"), "args": [[ref("anonymous_0"), "x"]],
           "printable": "(anonymous_5 anonymous_0:$x)"}),
    instanceof={"P": ["anonymous_0", "anonymous_1"], "And": ["anonymous_2", "anonymous_3"]},
)


@pytest.mark.parametrize("seed", range(5))
def test_renumbering_is_not_a_difference(seed):
    assert diff_documents(renumber(SAMPLE, seed), SAMPLE) == []


def test_names_depend_on_content_only():
    names = canonical_names(SAMPLE)
    assert len(set(names.values())) == 6
    assert canonical_names(renumber(SAMPLE, 3)).keys() == names.keys()


def test_changed_field_of_anonymous_record_is_reported_once_with_its_location():
    other = renumber(SAMPLE, 1)
    target = next(k for k, v in other.items() if isinstance(v, dict) and v.get("v") == 1)
    other[target]["v"] = 7
    diffs = diff_documents(other, SAMPLE)
    assert len(diffs) == 1, diffs
    assert ".v: tdflow 7 != llvm-tblgen 1" in diffs[0] and "[a.td:1]" in diffs[0]


def test_named_record_differences():
    theirs = doc(rec("A", x=1), rec("B"))
    ours = doc(rec("A", x=2), rec("C"))
    assert diff_documents(ours, theirs) == [
        "A.x: tdflow 2 != llvm-tblgen 1",
        "B: missing in tdflow (a.td:1)",
        "C: extra in tdflow (a.td:1)",
    ]
    assert first_difference(ours, theirs) == "A.x: tdflow 2 != llvm-tblgen 1"


def test_swapped_references_are_a_difference():
    other = json.loads(json.dumps(SAMPLE))
    other["X"]["pred"], other["X"]["other"] = other["X"]["other"], other["X"]["pred"]
    assert any(d.startswith("X.pred") for d in diff_documents(other, SAMPLE))


def test_identical_anonymous_copies_are_counted():
    one = doc(rec("anonymous_0", True, v=1))
    two = doc(rec("anonymous_0", True, v=1), rec("anonymous_1", True, v=1))
    assert "identical copies" in diff_documents(two, one)[0]


def test_instanceof_difference():
    theirs = doc(rec("A"), instanceof={"C": ["A"]})
    ours = doc(rec("A"), instanceof={"C": []})
    assert diff_documents(ours, theirs) == ['!instanceof.C: extra [], missing ["A"]']


@pytest.mark.oracle
def test_real_document_survives_renumbering(llvm_tblgen, mlir_include):
    path = mlir_include / "mlir/Dialect/Arith/IR/ArithOps.td"
    theirs = llvm_json(llvm_tblgen, path, [mlir_include, path.parent])
    assert diff_documents(renumber(theirs, 0), theirs) == []
