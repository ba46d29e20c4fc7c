"""The Chroma store and the care of its on-disk folder, one module per job.

* `store`: `ChromaEpisodeStore`, the store on Chroma (embedded on disk, in memory,
  or a server).
* `records`: an episode as a Chroma record (metadata, filters, rows read back).
* `hits`: a Chroma query's rows as search hits.
* `open_namespaces`: the cap on namespaces a client keeps open.
* `folder`: checking, locking and indexing a folder; translating Chroma's failures.
* `precheck`, `health`: the folder's files checked before Chroma opens them; `verify`.
* `journal_head`: the journal's newest entry, read straight from the database.
* `scrub`: erased ids removed from Chroma's log and indexes.
* `snapshot`: a read-only folder read through a copy.
* `salvage`: a damaged folder read from its database.
"""
