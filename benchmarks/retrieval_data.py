"""Labelled coding tasks for the retrieval-quality benchmark, written by hand.

Each :class:`LabelledTask` is a past task (recorded as an episode) with two paraphrases
(used as queries) that say the same thing in other words: they share few content words
with the original, so a purely lexical embedding has little to go on. Several tasks are
near misses of one another on purpose (an empty page vs. pagination, a CSV encoding bug
vs. CSV quoting vs. a huge CSV, cache expiry vs. cache eviction, a flaky test from timing
vs. one from shared state, ...), and :data:`DISTRACTORS` adds episodes that are never the
answer but share surface words with the queries.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_episodic import TaskCategory

__all__ = ["DISTRACTORS", "TASKS", "LabelledTask"]

_GEN = TaskCategory.CODE_GENERATION
_DEBUG = TaskCategory.DEBUGGING
_REFACTOR = TaskCategory.REFACTORING
_TEST = TaskCategory.TESTING
_ARCH = TaskCategory.ARCHITECTURE


@dataclass(frozen=True)
class LabelledTask:
    """A past task and two queries whose right answer it is.

    Attributes:
        key: Unique id; the episode id in the benchmark.
        category: The task's category.
        description: The task as it was recorded.
        paraphrases: Two rewordings that share few words with ``description``.
    """

    key: str
    category: TaskCategory
    description: str
    paraphrases: tuple[str, str]


def _t(key: str, category: TaskCategory, description: str, p1: str, p2: str) -> LabelledTask:
    return LabelledTask(key, category, description, (p1, p2))


TASKS: tuple[LabelledTask, ...] = (
    # --- authentication and sessions
    _t(
        "login-empty-password",
        _DEBUG,
        "Fix the crash when a user logs in with an empty password",
        "Login handler throws on blank credentials",
        "Sign-in blows up if the passphrase field is left blank",
    ),
    _t(
        "login-lockout",
        _GEN,
        "Lock an account for 15 minutes after five failed login attempts",
        "Block brute-force guessing by temporarily disabling sign-in after repeated wrong "
        "passwords",
        "Throttle credential guessing: freeze the user for a quarter hour",
    ),
    _t(
        "jwt-refresh",
        _GEN,
        "Implement refresh tokens so that access tokens can be renewed without logging in again",
        "Keep people signed in by issuing a long-lived credential that mints new short-lived JWTs",
        "Session renewal: exchange an expiring bearer credential for a fresh one silently",
    ),
    _t(
        "password-reset",
        _GEN,
        "Send a password reset link by email that expires after one hour",
        "Forgot-my-passphrase flow: mail a one-time URL valid for sixty minutes",
        "Let users recover their account through a time-limited message in their inbox",
    ),
    _t(
        "session-fixation",
        _DEBUG,
        "Regenerate the session id after login to prevent session fixation",
        "Issue a fresh cookie identifier once someone authenticates so attackers can't reuse "
        "a planted one",
        "Rotate the auth token value on sign-in to block hijacking",
    ),
    # --- CSV and files
    _t(
        "csv-quoted-comma",
        _DEBUG,
        "CSV parser splits fields incorrectly when a value contains a quoted comma",
        "Spreadsheet import breaks rows apart on delimiters inside quotation marks",
        "Tabular file reader mishandles separators wrapped in double quotes",
    ),
    _t(
        "csv-streaming",
        _GEN,
        "Stream a 5 GB CSV file row by row instead of loading it into memory",
        "Process a huge comma-separated dataset incrementally to avoid running out of RAM",
        "Read an enormous tabular export lazily with a generator",
    ),
    _t(
        "csv-excel-encoding",
        _DEBUG,
        "Exported CSV shows garbled characters when opened in Excel",
        "Spreadsheet app displays mojibake for non-English text in our download; add a BOM",
        "Accented letters turn into junk in the comma-separated report on Windows",
    ),
    _t(
        "unicode-filenames",
        _DEBUG,
        "Downloads fail for files whose names contain accented characters",
        "UnicodeEncodeError when serving attachments called 'résumé.pdf'",
        "Non-ASCII document titles break the Content-Disposition header",
    ),
    _t(
        "upload-size-limit",
        _DEBUG,
        "Uploads larger than 10 MB fail with a 413 error from nginx",
        "Big attachments are rejected by the reverse proxy with 'request entity too large'",
        "Users cannot send files over ten megabytes; the web server refuses the body",
    ),
    _t(
        "thumbnails",
        _GEN,
        "Generate thumbnails of uploaded photos at three sizes",
        "Produce small, medium and large previews whenever someone submits a picture",
        "Downscale incoming images into several preview resolutions",
    ),
    _t(
        "excel-export",
        _GEN,
        "Export the monthly sales report as an Excel spreadsheet",
        "Let finance download revenue figures for each month as an xlsx file",
        "Produce a workbook of turnover per period for accountants",
    ),
    # --- caching
    _t(
        "cache-ttl",
        _GEN,
        "Add an in-memory cache with expiry for user profile lookups",
        "Memoize account detail fetches for a few minutes so we stop hitting the database",
        "Keep recently read member records in RAM with a time-to-live",
    ),
    _t(
        "cache-eviction",
        _DEBUG,
        "The cache grows without bound; add least-recently-used eviction",
        "Memoization dict eats all RAM; cap its size and drop the oldest entries",
        "Bound the lookup store and throw out stale keys when it is full",
    ),
    _t(
        "ci-dependency-cache",
        _ARCH,
        "Cache pip dependencies in the GitHub Actions workflow to speed up CI",
        "Pipeline reinstalls every Python package on each run; persist them between jobs",
        "Make continuous integration faster by reusing downloaded wheels across builds",
    ),
    # --- pagination and lists
    _t(
        "cursor-pagination",
        _GEN,
        "Implement cursor-based pagination for the orders REST endpoint",
        "Let the purchases API return results page by page using an opaque continuation token",
        "Serve the sales list in chunks with a next marker instead of offsets",
    ),
    _t(
        "off-by-one-page",
        _DEBUG,
        "Off-by-one error drops the last item of every page",
        "Final record of each batch goes missing because the slice end is wrong",
        "Loop bound excludes the trailing element in chunked results",
    ),
    _t(
        "page-count-filters",
        _DEBUG,
        "The page count is wrong when filters are applied to the list view",
        "Number of result pages ignores the active search criteria",
        "Paginator total reflects unfiltered rows, so the final screens come up empty",
    ),
    # --- databases and migrations
    _t(
        "migration-add-column",
        _ARCH,
        "Write a database migration that adds a non-null column with a default to a large table",
        "Schema change: introduce a required field on a huge relation without locking it for hours",
        "Alter the big Postgres table to include a mandatory attribute, backfilling existing rows",
    ),
    _t(
        "migration-rollback",
        _ARCH,
        "Make the failed schema migration reversible with a down step",
        "Add an undo path so a broken DB change can be rolled back safely",
        "Alembic revision has no downgrade; write one",
    ),
    _t(
        "slow-dashboard-query",
        _DEBUG,
        "Speed up the dashboard query that does a full table scan on every page load",
        "Add the missing index so the analytics overview stops reading every row",
        "Admin home screen takes eight seconds because SQL ignores indexes",
    ),
    _t(
        "n-plus-one",
        _DEBUG,
        "Remove the N+1 queries when listing blog posts with their authors",
        "Article index fires one SQL statement per writer; eager-load them instead",
        "ORM lazily fetches each entry's creator in a loop, hammering the DB",
    ),
    _t(
        "deadlock",
        _DEBUG,
        "Two transactions deadlock when they update the same rows in opposite order",
        "Database occasionally aborts one of a pair of concurrent writes with a lock cycle error",
        "Simultaneous balance transfers block each other forever; acquire locks consistently",
    ),
    _t(
        "read-replica",
        _ARCH,
        "Route read-only queries to a database replica to take load off the primary",
        "Send SELECTs to a follower instance while writes go to the leader",
        "Scale reads by pointing reporting traffic at a secondary copy",
    ),
    _t(
        "sql-injection",
        _DEBUG,
        "Fix the SQL injection in the product search by using parameterized queries",
        "Catalog lookup concatenates user input into a statement; bind values instead",
        "Attackers can drop tables through the item filter box; escape input properly",
    ),
    _t(
        "float-money",
        _DEBUG,
        "Totals are off by a cent because prices are stored as floats",
        "Rounding drift in invoice sums from binary floating point; switch to Decimal",
        "Currency amounts like 0.1 + 0.2 produce wrong charge figures",
    ),
    _t(
        "env-credentials",
        _REFACTOR,
        "Read database credentials from environment variables instead of hard-coding them",
        "Stop committing the DB user and secret in source; take them from the process env",
        "Move connection settings out of the code into twelve-factor style config",
    ),
    # --- flaky tests and testing
    _t(
        "flaky-timing",
        _TEST,
        "Stabilise a flaky integration test that fails intermittently because of timing",
        "A CI check passes or fails at random depending on how fast the machine is",
        "Nondeterministic end-to-end spec sometimes times out; make it reliable",
    ),
    _t(
        "flaky-shared-state",
        _TEST,
        "Tests pass alone but fail when run together because they share global state",
        "Suite is order-dependent: one case leaks a module-level variable into the next",
        "Isolation problem: shuffling the specs makes some of them break",
    ),
    _t(
        "querystring-unit-tests",
        _TEST,
        "Write unit tests for the URL query-string parser covering edge cases",
        "Add coverage for decoding ?a=1&b=2 style parameters, including empty and repeated keys",
        "Exercise the search-params splitting function with tricky inputs like percent escapes",
    ),
    _t(
        "mock-weather-api",
        _TEST,
        "Mock the weather service HTTP API in tests so they run without network",
        "Replace calls to the forecast provider with a fake during the suite to work offline",
        "Stub out remote meteorological requests in pytest",
    ),
    _t(
        "snapshot-tests",
        _TEST,
        "Add snapshot tests for the React components of the dashboard",
        "Record rendered UI markup and fail when the frontend widgets change unexpectedly",
        "Golden-file checks for the admin panel's view layer",
    ),
    _t(
        "property-based-money",
        _TEST,
        "Use property-based testing with Hypothesis for the money rounding functions",
        "Generate random amounts to check currency arithmetic invariants automatically",
        "Fuzz the cents-conversion helpers with generated inputs",
    ),
    _t(
        "shared-fixtures",
        _TEST,
        "Remove duplicated setup code from the test suite with shared fixtures",
        "Many spec files build the same objects by hand; factor that into reusable helpers",
        "DRY up repeated arrangement steps across our checks",
    ),
    # --- concurrency
    _t(
        "race-counter",
        _DEBUG,
        "Fix a race condition where two threads increment the shared counter at the same time",
        "Concurrent workers lose updates to a global tally; guard it with a lock",
        "Parallel requests occasionally overwrite each other's hit count",
    ),
    _t(
        "race-log-file",
        _DEBUG,
        "Two processes writing the same log file at once corrupt its lines",
        "Concurrent appends from several workers interleave output mid-line",
        "Parallel jobs garble a shared text document; serialize access to it",
    ),
    _t(
        "cron-duplicates",
        _DEBUG,
        "The nightly cron job runs twice when two servers are deployed",
        "Scheduled task executes on every replica; ensure only one instance does it",
        "Horizontal scaling makes the midnight batch happen in duplicate",
    ),
    _t(
        "dst-reports",
        _DEBUG,
        "Scheduled reports run an hour late after the daylight saving time change",
        "Cron jobs fire sixty minutes off since clocks moved forward in spring",
        "DST transition shifts the nightly summary mail by one hour",
    ),
    _t(
        "memory-leak-worker",
        _DEBUG,
        "Find the memory leak that makes the worker process grow until it is killed",
        "Background daemon's RSS keeps climbing and the OOM killer eventually terminates it",
        "Job runner consumes more and more RAM over days; track down what is retained",
    ),
    # --- refactoring
    _t(
        "god-class",
        _REFACTOR,
        "Split the 2,000-line OrderManager god class into smaller services",
        "Break up the huge checkout coordinator object into focused components",
        "Decompose a monolithic type that does everything for purchases into cohesive modules",
    ),
    _t(
        "rename-variables",
        _REFACTOR,
        "Rename cryptic single-letter variables in the billing module to descriptive names",
        "Give the invoice code's x, y and t identifiers meaningful labels",
        "Improve readability of payment calculations by replacing one-character identifiers",
    ),
    _t(
        "extract-discount",
        _REFACTOR,
        "Extract the discount calculation from the checkout view into a pure function",
        "Pull price-reduction logic out of the HTTP handler so it can be tested alone",
        "Isolate promo math from the controller into a side-effect-free helper",
    ),
    _t(
        "async-http",
        _REFACTOR,
        "Convert the synchronous HTTP client calls to asyncio with aiohttp",
        "Make outbound web requests non-blocking using async/await",
        "Port the blocking requests-based fetchers to an event loop",
    ),
    _t(
        "type-hints",
        _REFACTOR,
        "Add type hints to the utils package and make mypy pass in strict mode",
        "Annotate helper module signatures so the static checker reports no errors",
        "Gradually annotate the miscellaneous functions and enable rigorous static analysis",
    ),
    _t(
        "structured-logging",
        _REFACTOR,
        "Replace print statements with structured JSON logging",
        "Swap ad-hoc console output for machine-readable log records with fields",
        "Emit key-value events through the logger instead of writing to stdout",
    ),
    _t(
        "django-upgrade",
        _REFACTOR,
        "Upgrade the project from Django 3.2 to Django 4.2 and fix deprecations",
        "Move the web framework to the next LTS release and clean up removed APIs",
        "Bump our main backend library two major versions and repair whatever broke",
    ),
    # --- features
    _t(
        "rate-limit",
        _GEN,
        "Add rate limiting of 100 requests per minute per API key",
        "Throttle each client token so it cannot call the service more than a hundred times "
        "every sixty seconds",
        "Reject callers who exceed a per-credential quota with HTTP 429",
    ),
    _t(
        "retry-backoff",
        _GEN,
        "Wrap calls to the payment gateway with retries and exponential backoff",
        "When the card processor times out, try again with growing delays between attempts",
        "Make transient billing provider failures recoverable by re-sending after waiting "
        "longer each time",
    ),
    _t(
        "json-datetime",
        _DEBUG,
        "json.dumps fails with 'Object of type datetime is not JSON serializable'",
        "Serializing a timestamp field to an HTTP response raises a TypeError",
        "Encoder chokes on date objects when returning API payloads",
    ),
    _t(
        "websocket-reconnect",
        _GEN,
        "Reconnect the websocket client automatically after the connection drops",
        "Live chat socket dies when wifi blips; re-establish it without a page refresh",
        "Resume the real-time channel by itself once the network comes back",
    ),
    _t(
        "i18n-settings",
        _GEN,
        "Translate the settings page into German and French with gettext",
        "Localize the preferences screen for two European languages",
        "Add de and fr message catalogs for the configuration UI",
    ),
    _t(
        "a11y-signup",
        _GEN,
        "Make the signup form accessible to screen readers with proper labels",
        "Blind users' assistive tech cannot tell what each registration input is for",
        "Add aria attributes so the account creation fields are announced correctly",
    ),
    _t(
        "email-validation",
        _GEN,
        "Validate email addresses on the registration form",
        "Reject malformed contact mailboxes when people create an account",
        "Check that the sign-up inbox field looks like name@domain",
    ),
    _t(
        "cli-subcommands",
        _GEN,
        "Build a command-line tool with subcommands for import and export",
        "Terminal utility offering 'ingest' and 'dump' verbs with their own flags",
        "Create an argparse program whose first argument chooses between loading and saving data",
    ),
    _t(
        "fuzzy-search",
        _GEN,
        "Add typo-tolerant fuzzy search to the product catalogue",
        "Find items even when shoppers misspell them in the query box",
        "Approximate string matching for merchandise lookups",
    ),
    _t(
        "graceful-shutdown",
        _GEN,
        "Handle SIGTERM so the server finishes in-flight requests before exiting",
        "Drain open connections on termination signal during Kubernetes rollouts",
        "Stop the process cleanly without cutting off users mid-response",
    ),
    _t(
        "healthcheck",
        _GEN,
        "Add a health check endpoint that reports database and cache status",
        "Expose /healthz telling the load balancer whether Postgres and Redis are reachable",
        "Liveness probe route that verifies backing stores respond",
    ),
    _t(
        "webhook-hmac",
        _GEN,
        "Verify HMAC signatures on incoming webhooks from Stripe",
        "Authenticate callback POSTs from the payments provider using a shared secret",
        "Reject forged event notifications by checking their keyed hash header",
    ),
    _t(
        "xss-comments",
        _DEBUG,
        "Escape user comments to prevent stored cross-site scripting",
        "Script tags typed into the feedback box execute for every visitor",
        "Sanitize posted remarks so injected JavaScript is rendered as text",
    ),
    # --- architecture
    _t(
        "docker-multistage",
        _ARCH,
        "Shrink the Docker image from 1.2 GB using a multi-stage build",
        "Container is huge; compile in one stage and copy only the artifacts into a slim base",
        "Reduce the deployable footprint by separating build tooling from runtime",
    ),
    _t(
        "feature-flags",
        _ARCH,
        "Introduce feature flags so that new checkout code can be enabled per customer",
        "Let us toggle the redesigned payment flow on for selected accounts only",
        "Gradual rollout switch for the reworked purchase page, configurable per tenant",
    ),
    _t(
        "background-invoices",
        _ARCH,
        "Move PDF invoice generation out of the request into a background job queue",
        "Generating billing documents blocks HTTP responses; hand it off to Celery workers",
        "Render receipts asynchronously via a task broker rather than inline",
    ),
    _t(
        "notification-service",
        _ARCH,
        "Split the notification code out of the monolith into its own service",
        "Carve alerts and messaging into a separately deployable component",
        "Extract push, SMS and email sending from the main app behind a network API",
    ),
    _t(
        "event-sourcing",
        _ARCH,
        "Design an event log so that account balances can be rebuilt by replaying transactions",
        "Store every ledger change as an append-only record and derive the current state from it",
        "Event-sourced wallet: reconstruct funds from history",
    ),
)

# Episodes that are never the right answer but share surface words with the queries
# ("blank", "handler", "page", "spreadsheet", "token", "lock", ...).
DISTRACTORS: tuple[tuple[str, TaskCategory, str], ...] = (
    ("d-show-password", _GEN, "Add a show-password toggle to the login form"),
    ("d-blank-lines", _DEBUG, "Config handler throws a KeyError on blank lines"),
    ("d-json-comments", _GEN, "Parse JSON configuration files that contain comments"),
    ("d-regex-cache", _REFACTOR, "Cache compiled regular expressions at module import"),
    ("d-admin-table", _GEN, "Add page size controls to the admin user table"),
    ("d-enum-migration", _ARCH, "Write a data migration converting legacy status strings to enums"),
    ("d-flaky-marker", _TEST, "Quarantine known flaky tests behind a pytest marker"),
    ("d-pool-docs", _ARCH, "Document the thread-safety guarantees of the connection pool"),
    ("d-email-templates", _REFACTOR, "Refactor the email templates to share a base layout"),
    ("d-csv-button", _GEN, "Add a CSV download button to the orders page"),
    ("d-request-timing", _GEN, "Log the duration of each HTTP request with its route"),
    ("d-inventory-client", _GEN, "Write an HTTP client for the inventory service with timeouts"),
    ("d-node-upgrade", _REFACTOR, "Upgrade the Node.js version used by the frontend build"),
    ("d-empty-inbox", _GEN, "Show an illustration on the empty inbox screen"),
    ("d-latency-chart", _GEN, "Render a chart of request latency per endpoint"),
    ("d-merge-nulls", _DEBUG, "Handle null values when merging two customer records"),
    ("d-spreadsheet-formulas", _GEN, "Evaluate spreadsheet formulas in the import preview"),
    ("d-token-counter", _GEN, "Count tokens in the prompt before calling the language model"),
    ("d-lock-file", _DEBUG, "Stale lock file prevents the deploy script from starting"),
    ("d-dark-mode", _GEN, "Add a dark mode toggle to the settings screen"),
)
