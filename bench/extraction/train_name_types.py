"""Train the local extractor's typer for names the rules leave undecided (``extract/local/name_model.py``).

Runs the offline extractor over labelled open sets (JSON lines in the gold format of
``bench/extraction/open/``), collects every name the rules leave undecided with its features, labels it with
the gold type of the entity it names (``none`` if it names no gold entity; names only optional in the gold
are left out), fits a multinomial logistic regression (scikit-learn) and writes its weights as JSON.

    python bench/extraction/train_name_types.py bench/extraction/open/probeset{6,7,8,9}.jsonl \
        --out src/loregraph/extract/data/name_types.json

Train only on sets written for this project; the shared dev sets are for measuring, never for training.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from loregraph.extract.base import ExtractionContext
from loregraph.extract.local import LocalExtractor
from loregraph.extract.local import extractor as extractor_module
from loregraph.extract.local.name_model import NONE, name_features, needs_a_type

_ARTICLE = re.compile(r"^(the|a|an|project)\s+")


def norm(name: str) -> str:
    n = re.sub(r"[^\w\s+#.&'-]", "", name.casefold()).strip(" .'-")
    return _ARTICLE.sub("", n).strip()


def label_for(name: str, gold: dict[str, str], optional: set[str], people_first: dict[str, str]) -> str | None:
    k = norm(name)
    if k in gold:
        return gold[k]
    if k in optional:
        return None
    if " " not in k and k in people_first:
        return people_first[k]
    return NONE


def collect(paths: list[Path]) -> tuple[list[dict[str, float]], list[str]]:
    ex = LocalExtractor(use_name_model=False)
    pending: list[dict[str, float]] = []
    names: list[str] = []

    def capture(st: Any) -> None:
        for m in st.mentions:
            if needs_a_type(st, m):
                pending.append(name_features(st, m))
                names.append(m.name)

    extractor_module.type_undecided_names = capture  # the extractor calls it where the model would act
    ex.use_name_model = True
    xs: list[dict[str, float]] = []
    ys: list[str] = []
    for path in paths:
        known: dict[str, dict[str, str]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            msg = json.loads(line)
            user = msg["user_id"]
            gold = known.setdefault(user, {})
            for e in msg["entities"]:
                for n in [e["name"], *e.get("aliases", [])]:
                    gold[norm(n)] = e["type"]
            optional = {norm(n) for e in msg.get("optional_entities", []) for n in [e["name"], *e.get("aliases", [])]}
            firsts = {norm(n).split()[0]: t for n, t in gold.items() if t == "person" and " " in norm(n)}
            when = datetime.fromisoformat(msg["timestamp"].replace("Z", "+00:00"))
            pending.clear()
            names.clear()
            ex.extract(msg["content"], ExtractionContext(group_id="train", reference_time=when, role_type="user",
                                                         role="user"))
            for f, n in zip(pending, names, strict=True):
                y = label_for(n, gold, optional, firsts)
                if y is not None:
                    xs.append(dict(f))
                    ys.append(y)
    return xs, ys


def model_json(classes: list[str], weights: dict[str, list[float]], trained_on: list[str]) -> str:
    """The weights file: its header, then one feature and its row of class weights per line (readable diffs)."""
    rows = ",\n".join(f"  {json.dumps(name)}: {json.dumps(row)}" for name, row in sorted(weights.items()))
    head = {"about": "weights of extract/local/name_model.py, written by bench/extraction/train_name_types.py",
            "trained_on": trained_on, "classes": classes}
    return json.dumps(head, indent=1)[:-2] + ',\n "weights": {\n' + rows + "\n }\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength")
    args = ap.parse_args(argv)
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    xs, ys = collect(args.sets)
    print(f"instances={len(xs)} labels={dict(Counter(ys))}", file=sys.stderr)
    if len(set(ys)) < 2:
        print("error: the sets give undecided names of fewer than two labels; nothing to learn", file=sys.stderr)
        return 2
    vec = DictVectorizer()
    x = vec.fit_transform(xs)
    model = LogisticRegression(C=args.c, max_iter=2000, fit_intercept=False)
    model.fit(x, ys)
    print(f"train_accuracy={model.score(x, ys):.3f}", file=sys.stderr)
    classes = [str(c) for c in model.classes_]
    # two classes: scikit-learn keeps one row (the second class against the first); as softmax rows that is
    # zeros for the first class and the row for the second
    coef = model.coef_ if len(classes) > 2 else [[0.0] * model.coef_.shape[1], list(model.coef_[0])]
    weights = {name: [round(float(coef[i][j]), 4) for i in range(len(classes))]
               for name, j in vec.vocabulary_.items()
               if any(abs(coef[i][j]) >= 1e-4 for i in range(len(classes)))}
    args.out.write_text(model_json(classes, weights, [p.name for p in args.sets]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
