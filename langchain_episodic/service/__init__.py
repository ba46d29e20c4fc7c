"""The memory's jobs, one module each, over one namespace's context.

* `context`: store, namespace, embeddings, clock, lock.
* `opening`: the embedder fingerprint guard, namespace checks.
* `writing`: validating and storing episodes.
* `recall`: search, rank, explain.
* `quarantine`: the quarantine log.
* `journal`: one read of the journal for credit and lessons.
* `credit_log`: runs, outcomes, utilities.
* `lesson_log`: lessons and their vectors.
* `lessons`: adding, revising, consolidating, recalling lessons.
* `summary`: the per-category summary.

`EpisodicMemory` is the façade over them.
"""
