"""Sets for the relevance benchmark written apart from the packaged background.

The background the relevance test compares against
(``langchain_episodic/embeddings/data/background_en.txt``) and these sets were written
separately, by different hands, so the off-topic figures are not measured on the texts
the test was built from.

* :data:`OFF_TOPIC_HELDOUT`: 60 requests about everyday life; about a third share a
  word with programming in its everyday sense (a bug in a mattress, a patch on jeans,
  a server in a restaurant, logs for the fire).
* :data:`OFF_TOPIC_FRESH`: 80 more, written last, by another hand, after the
  background was complete: about half of them adversarial (a leaking roof, a car
  that stalls, a deadlock of traffic, python the snake), its vocabulary chosen by
  its writer. The calibration was chosen on the paraphrase hit@1 and the two sets
  above; this one's figures were seen but never chosen for (the final choice made
  them a little worse), so it reports how the test holds on what it was not tuned to.
* :data:`PARAPHRASE_PAIRS`: 40 (stored task, new request about the same task in other
  words) pairs of software work, on topics :data:`~benchmarks.retrieval_data.TASKS`
  does not cover.
"""

# ruff: noqa: E501  (one text per line reads better than split strings)

from __future__ import annotations

__all__ = ["OFF_TOPIC_FRESH", "OFF_TOPIC_HELDOUT", "PARAPHRASE_PAIRS"]

OFF_TOPIC_HELDOUT: tuple[str, ...] = (
    "What's a good substitute for buttermilk in pancake batter?",
    "What's the best way to get rid of bed bugs in a mattress?",
    "Can you suggest a three-day itinerary for Lisbon in October?",
    "How do I sew a denim patch over a hole in my jeans?",
    "What are the early signs of dehydration in older adults?",
    "How often should I water a snake plant in winter?",
    "A storm dropped a tree branch on my neighbor's fence; who pays?",
    "Explain the offside rule in soccer in simple terms.",
    "How much should I tip the server at a restaurant in Canada?",
    "Why is the sky blue during the day but red at sunset?",
    "What's the difference between baking soda and baking powder?",
    "Any tips for a nervous new driver merging onto a busy highway?",
    "How do I get red wine stains out of a wool carpet?",
    "How many days is someone with the flu virus contagious?",
    "What should I pack for a week of hiking in Patagonia?",
    "Is it legal to record a phone call without telling the other person?",
    "Help me make a weekly chore schedule for three roommates sharing a flat.",
    "How many hours of sleep does a teenager actually need?",
    "Do I need to fast before a cholesterol blood test tomorrow?",
    "Suggest a beginner strength training routine using only dumbbells.",
    "How do tides work, and why are there two each day?",
    "A mouse keeps eating cookies from my pantry; how can I stop it?",
    "What wine pairs well with grilled salmon and asparagus?",
    "How do I ask my landlord to return my security deposit?",
    "How long should split oak logs season before going in the stove?",
    "What are some fun birthday party ideas for a six-year-old?",
    "How do I stop my puppy from biting people's hands?",
    "After a minor car crash caused a traffic backup, should I move my car?",
    "What causes hiccups and how can I make them stop?",
    "How long can cooked rice safely stay in the refrigerator?",
    "Is a ball python a good first pet for a ten-year-old?",
    "Which houseplants are safe to keep around cats?",
    "How should I structure a book report on To Kill a Mockingbird?",
    "Recommend some classic mystery novels similar to Agatha Christie's books.",
    "What kind of thread should I use to sew a coat button back on?",
    "How do I tune a guitar by ear without a tuner?",
    "What is the capital of Australia, and why isn't it Sydney?",
    "How early should I join the queue for the Louvre on Sunday?",
    "How much should I budget for a wedding with a hundred guests?",
    "Do ginkgo tablets actually improve memory in older adults?",
    "What stretches help relieve lower back pain after sitting all day?",
    "How do I get my sourdough starter to rise more reliably?",
    "I locked my keys inside the house; how can I get back in?",
    "What's the rule for who gets the right of way at a four-way stop?",
    "How do vaccines teach the immune system to recognize a disease?",
    "Is it safe to drink water straight from a mountain stream while hiking?",
    "Suggest a vegetarian chili recipe that feeds eight people.",
    "How do I remove rust from an old cast iron skillet?",
    "Do I need a permit to build a garden shed with a window?",
    "What's the best time of year to see the northern lights in Iceland?",
    "How do I politely decline a wedding invitation from a coworker?",
    "How do squirrels remember where they buried their winter cache of acorns?",
    "What are the rules for carrying liquids in hand luggage on flights?",
    "How long did it take to deploy troops to France in World War One?",
    "Who won the most Grand Slam tennis titles in the men's game?",
    "How can I make my small balcony garden attract more bees?",
    "Why was the Keystone XL oil pipeline so controversial with Nebraska ranchers?",
    "Is it worth renting or buying a home in the current market?",
    "How do I unclog a slow bathroom sink drain without chemicals?",
    "How do I keep my basil plant from flowering too early?",
)

OFF_TOPIC_FRESH: tuple[str, ...] = (
    "My kitchen faucet keeps leaking even after I replaced the rubber washer.",
    "What are some good stretches for lower back pain after long drives?",
    "My car stalls at red lights whenever the engine is still cold.",
    "How long should I boil eggs if I want a runny yolk?",
    "Why does my blood sugar crash about two hours after eating breakfast?",
    "What are the must-see sights in Lisbon on a three-day trip?",
    "How do I migrate my perennial garden to raised beds without killing the plants?",
    "How much should I save each month for a house down payment?",
    "My grandmother's memory is failing; how do we get her tested for dementia?",
    "Can my employer legally refuse my vacation request during peak season?",
    "How do I troubleshoot a lawnmower that won't start after sitting all winter?",
    "Why is the sky blue during the day but red at sunset?",
    "How do I safely remove a ball python that escaped into my neighbor's garage?",
    "What caused the fall of the Western Roman Empire?",
    "My morning java tastes bitter; should I grind the coffee beans coarser?",
    "What's the best way to sand and refinish an old oak table?",
    "What's the easiest way to patch a fist-sized hole in drywall?",
    "How do offside rules work in professional soccer?",
    "My passport application was rejected because of a photo error; what now?",
    "What can I cook with leftover rice, eggs, and frozen peas?",
    "Should I upgrade my car's brake pads to ceramic or stick with organic?",
    "How do I apologize to a friend after forgetting her birthday?",
    "Our houseplants have a bug infestation; are fungus gnats harmful to pets?",
    "What documents do I need to renew my driver's license in person?",
    "My apple tree's fruit keeps rotting before harvest; what's the root cause?",
    "Which wildflowers attract the most bees and butterflies in spring?",
    "How do I reset a tripped circuit breaker when the kitchen outlets go dead?",
    "How often should I rotate the tires on a family minivan?",
    "Does building code require a firewall between an attached garage and the house?",
    "What study techniques help teenagers prepare for final exams?",
    "My lawn sprinkler schedule overlaps with my neighbor's; how do I change watering days?",
    "How do I ask for a raise as a registered nurse?",
    "The bank put a security hold on my checking account; how do I lift it?",
    "Is it safe to eat raw cookie dough made with pasteurized eggs?",
    "Which version of the Bible is easiest for reading aloud to children?",
    "How should I train for my first half marathon in twelve weeks?",
    "My water heater's performance dropped badly; does the tank need flushing?",
    "Why do leaves change color in the autumn?",
    "How many timeouts does each team get in an NBA game?",
    "What's a polite way to decline a wedding invitation from a coworker?",
    "Blight is spreading through my tomato plant's branches; how do I stop it?",
    "How much water should a pregnant woman drink each day?",
    "Can I merge two old retirement accounts into one without tax penalties?",
    "Who was the first woman to win a Nobel Prize, and for what?",
    "How do I tie a bowline knot so the loop won't slip under load?",
    "What should I pack for a week of camping in the Scottish Highlands?",
    "How quickly can an army reserve unit deploy after being called up?",
    "How can I help my shy son make friends at his new school?",
    "Where do squirrels hide their winter cache of nuts and seeds?",
    "What are the symptoms of iron deficiency in adult women?",
    "Our restaurant kitchen has a bottleneck at the grill station during dinner rush.",
    "How do I repot an overgrown snake plant without hurting it?",
    "Which filing status applies to me on my taxes after finalizing a divorce?",
    "What's the best time of year to see the northern lights in Iceland?",
    "Any tips for backing up a camping trailer into a narrow driveway?",
    "What is the main difference between weather and climate?",
    "Can my landlord override the original lease terms when I renew?",
    "Which spices go well with roasted butternut squash soup?",
    "How do I compile a family tree from old parish records and census data?",
    "How do I teach my dog to stop pulling on the leash?",
    "Why does my sewing machine thread keep snapping halfway through a seam?",
    "What's the etiquette for tipping hotel housekeeping staff in Japan?",
    "What's a good protocol for introducing a new puppy to my elderly cat?",
    "How do I write a heartfelt eulogy for my grandfather?",
    "My bread dough keeps failing to rise; is my yeast expired?",
    "Why do cats knead blankets with their paws?",
    "How do synchronized swimmers stay in sync underwater when they can't hear music?",
    "What are the rules for carrying liquids in hand luggage on European flights?",
    "What's the runtime of the extended edition of The Return of the King?",
    "How do I start learning watercolor painting as a complete beginner?",
    "On a sailboat, which side is port and how do I remember it?",
    "What happened at the Battle of Hastings in 1066?",
    "Why do some popcorn kernels never pop, even after a long time in the pot?",
    "My hermit crab hasn't switched shells in months; should I offer bigger ones?",
    "How can our warehouse crew boost pallet throughput without adding overtime shifts?",
    "Our book club vote ended in a deadlock; how should we break the tie?",
    "How early should I queue for the car ferry to the island in August?",
    "My basement floods whenever it rains; could the sump pump be overflowing?",
    "My child's immunization record is missing an entry; how can I recover it?",
    "How do I give constructive feedback to a new barista on my team?",
)

PARAPHRASE_PAIRS: tuple[tuple[str, str], ...] = (
    (
        "Fix signup form submitting twice when user double-clicks the submit button",
        "Registration page creates duplicate accounts if someone clicks the button rapidly",
    ),
    (
        "Implement refresh token rotation so stolen JWTs expire quickly",
        "Make compromised session credentials useless soon by issuing new renewal tokens on each use",
    ),
    (
        "Handle Stripe webhook events arriving out of order for subscription status",
        "Subscription state ends up wrong when payment provider callbacks come in an unexpected sequence",
    ),
    (
        "Invalidate Redis product cache when inventory counts change in admin panel",
        "Stock numbers edited by staff still show stale values on storefront pages",
    ),
    (
        "Add missing index on orders.customer_id to speed up account history query",
        "Purchase history screen for a shopper is slow because the lookup scans the whole table",
    ),
    (
        "Move failed email jobs to a dead-letter queue after three attempts",
        "Mail worker messages that keep erroring should be parked aside instead of reprocessed forever",
    ),
    (
        "CI pipeline flaky because integration tests share a single Postgres database",
        "Build checks randomly fail since parallel suites collide on the same DB instance",
    ),
    (
        "Redact credit card numbers and emails from application log output",
        "Sensitive customer data like PANs and addresses is leaking into our logs",
    ),
    (
        "Reduce homepage bundle size by lazy-loading the charting library",
        "Landing page JavaScript is too heavy; defer the graph package until it is needed",
    ),
    (
        "Fix race condition where two workers claim the same task row",
        "Occasionally a job gets processed twice because parallel consumers grab it simultaneously",
    ),
    (
        "Dropdown menu closes immediately on mobile Safari when tapped",
        "On iPhones the select popover vanishes right after a touch",
    ),
    (
        "Android app crashes on rotation because activity state is not saved",
        "Turning the phone sideways kills the app since screen data is lost on recreate",
    ),
    (
        "Airflow DAG backfill duplicates rows in the daily sales warehouse table",
        "Rerunning historical dates in our scheduler produces doubled revenue records in the warehouse",
    ),
    (
        "Prevent SQL injection in the product search endpoint using parameterized queries",
        "Search API concatenates user input into raw statements; make it safe against malicious strings",
    ),
    (
        "Extract hardcoded English strings in checkout into translation files",
        "Purchase flow text is baked into code; move it to locale resources so it can be localized",
    ),
    (
        "Add ARIA labels and keyboard focus to the image carousel controls",
        "Screen reader users cannot operate the slideshow arrows without a mouse",
    ),
    (
        "Split the 2000-line UserService into smaller domain-specific services",
        "Break up the giant account management class into focused modules",
    ),
    (
        "Add unit tests for the discount calculation with edge cases",
        "Cover coupon math with automated checks, including boundary values like zero and maximum",
    ),
    (
        "Migrate monolith notifications module into a separate microservice",
        "Extract alert sending from the main app so it deploys and scales independently",
    ),
    (
        "Kubernetes pods OOMKilled after upgrade; raise memory limits and profile heap",
        "Containers keep getting terminated for exceeding RAM since the new version rolled out",
    ),
    (
        "Large file uploads rejected by nginx with 413 errors",
        "Big attachments fail because the reverse proxy says request entity too large",
    ),
    (
        "HTML emails render broken in Outlook due to flexbox layout",
        "Newsletter looks garbled in Microsoft's desktop mail client because of modern CSS",
    ),
    (
        "Elasticsearch returns no results for queries with accented characters",
        "Typing names like José or Zoë into the lookup box finds nothing",
    ),
    (
        "API pagination skips records when items are inserted between page requests",
        "Clients paging through the list miss entries if new rows get added meanwhile",
    ),
    (
        "Move hardcoded AWS keys from source into a secrets manager",
        "Cloud credentials are committed in the repo; store them in a vault instead",
    ),
    (
        "Upgrade React from 16 to 18 and fix deprecated lifecycle methods",
        "Bump our UI library two major versions and replace the removed componentWillMount-style hooks",
    ),
    (
        "Node server memory leak from event listeners never being removed",
        "Backend process RAM climbs steadily because subscribed handlers are never detached",
    ),
    (
        "CSV export corrupts non-ASCII names when opened in Excel",
        "Spreadsheet download shows garbled accented customer names in Microsoft's office app",
    ),
    (
        "Add feature flag to gradually roll out new checkout redesign",
        "Release the revamped payment page to a small percentage of users first",
    ),
    (
        "WebSocket connections drop after 60 seconds behind the load balancer",
        "Realtime socket sessions get cut off at one minute by the ELB idle timeout",
    ),
    (
        "Generate thumbnails asynchronously instead of during the upload request",
        "Resizing pictures blocks the HTTP call; push preview creation to a background worker",
    ),
    (
        "Write zero-downtime migration to rename the users.fullname column",
        "Change a customer table field name without taking the site offline",
    ),
    (
        "iOS push notifications not delivered after APNs certificate expired",
        "iPhone users stopped receiving alerts once the Apple signing credential lapsed",
    ),
    (
        "Implement dark mode theme toggle persisted in localStorage",
        "Let people switch to a night color scheme and remember their choice in the browser",
    ),
    (
        "Fix CORS errors when the React frontend calls the staging API",
        "Browser blocks cross-origin requests from our web client to the test backend",
    ),
    (
        "Add Prometheus metrics and alerts for queue consumer lag",
        "Expose backlog depth of message processing and page on-call when it grows",
    ),
    (
        "Eliminate N+1 queries on the blog posts listing with eager loading",
        "Article index page fires one database call per entry for authors; batch them",
    ),
    (
        "Validate phone numbers consistently on client and server using libphonenumber",
        "Browser and backend disagree on which telephone inputs are acceptable; unify the rules",
    ),
    (
        "Kafka consumer commits offsets before processing, losing messages on crash",
        "Events vanish when the stream reader dies because acknowledgement happens too early",
    ),
    (
        "Fix color contrast failures flagged by Lighthouse accessibility audit",
        "Text on several pages is too faint for low-vision users according to the automated a11y scan",
    ),
)
