"""Pure maths of recall: decay, priority, relevance, ranking, credit, strategy, skills.

* `decay`: the one half-life decay and Beta mean.
* `priority`: the article's priority and its weights.
* `relevance`: "about this task?", then value.
* `ranking`: candidates ranked and explained, lessons too.
* `options`: `RecallOptions`.
* `credit`: injections, outcomes, utility.
* `strategy`: strategy rules from evidence.
* `skills`: skill profiles and learning curves.
"""

from __future__ import annotations
