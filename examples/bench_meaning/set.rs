//! The retrieval set of `bench_meaning`: topic sessions and the queries each answers.

pub struct Topic {
    pub id: &'static str,
    pub texts: &'static [&'static str],
}

pub struct Q {
    pub text: &'static str,
    pub answer: &'static str,
    /// `para` (other words), `exact` (the session's own words or identifiers), `xlang`.
    pub kind: &'static str,
}

pub const TOPICS: &[Topic] = &[
    Topic { id: "auth-flaky", texts: &["The login spec keeps failing intermittently in CI; the authentication test times out now and then.", "I added a retry around the session cookie check so the auth spec stops failing at random."] },
    Topic { id: "db-migration", texts: &["Rename the column in the PostgreSQL users table and write the schema migration.", "The migration script adds the new column and backfills it from the old one."] },
    Topic { id: "css-mobile", texts: &["The buttons look wrong on phones: fix the stylesheet grid so the layout works on small screens.", "Changed the CSS media queries and the colours of the navigation bar."] },
    Topic { id: "ts-parse", texts: &["Call parse_rfc3339_ts in the deserializer instead of the hand-written date code.", "parse_rfc3339_ts now returns an error for timestamps without a zone."] },
    Topic { id: "perf-alloc", texts: &["The server responds slowly; profiling showed the hot loop allocating memory on every request.", "Reusing the buffer made the endpoint three times faster."] },
    Topic { id: "cooking", texts: &["Recipe for a tomato pasta sauce with garlic, basil and olive oil.", "Simmer the sauce for twenty minutes and add salt."] },
    Topic { id: "docker-build", texts: &["The container image is huge; move to a multi-stage Dockerfile and a slim base.", "The image went from 1.2 GB to 180 MB with the distroless runtime stage."] },
    Topic { id: "git-rebase", texts: &["I messed up the interactive rebase and lost two commits on my branch.", "Recovered them from the reflog and cherry-picked them back."] },
    Topic { id: "k8s-crash", texts: &["The pod keeps restarting with CrashLoopBackOff after the deploy.", "The liveness probe hit the wrong port; fixed the manifest and the rollout is healthy."] },
    Topic { id: "email-smtp", texts: &["Password reset emails never arrive; the SMTP relay rejects our messages.", "Configured SPF and DKIM records for the domain and the mails are delivered now."] },
    Topic { id: "unicode-bug", texts: &["Names with accents are garbled in the exported CSV file.", "The writer used Latin-1; switched the export to UTF-8 with a BOM for spreadsheet programs."] },
    Topic { id: "rate-limit", texts: &["The API returns 429 Too Many Requests when the sync job runs.", "Added exponential backoff with jitter and a token bucket on our side."] },
    Topic { id: "dark-mode", texts: &["Users want a dark theme for the dashboard.", "Added a colour scheme toggle with CSS variables and prefers-color-scheme."] },
    Topic { id: "cron-timezone", texts: &["The nightly report job runs an hour late since the clocks changed.", "The scheduler used local time; it now runs in UTC and converts for display."] },
    Topic { id: "memory-leak", texts: &["The worker process grows to several gigabytes over a day until the OOM killer stops it.", "An event listener was registered on every request and never removed; the heap stays flat now."] },
    Topic { id: "i18n", texts: &["Translate the settings page into German and Japanese.", "Extracted the strings into message catalogs and added the locale switcher."] },
    Topic { id: "search-index", texts: &["Full-text search misses words with hyphens in the product catalog.", "Changed the tokenizer to split on hyphens and rebuilt the inverted index."] },
    Topic { id: "payments", texts: &["Customers are charged twice when they double-click the checkout button.", "Added an idempotency key to the charge request and disabled the button while it is pending."] },
    Topic { id: "backup", texts: &["Set up nightly snapshots of the database volume to object storage.", "The restore drill worked: we brought the staging database back from yesterday's snapshot in ten minutes."] },
    Topic { id: "tls-cert", texts: &["The site shows a certificate warning since this morning.", "The Let's Encrypt renewal failed because port 80 was closed; reopened it and renewed."] },
];

pub const QUERIES: &[Q] = &[
    Q {
        text: "flaky sign-in test",
        answer: "auth-flaky",
        kind: "para",
    },
    Q {
        text: "change a field name in the database table",
        answer: "db-migration",
        kind: "para",
    },
    Q {
        text: "page looks broken on a smartphone",
        answer: "css-mobile",
        kind: "para",
    },
    Q {
        text: "the backend is slow because of too many allocations",
        answer: "perf-alloc",
        kind: "para",
    },
    Q {
        text: "italian food",
        answer: "cooking",
        kind: "para",
    },
    Q {
        text: "make the container smaller",
        answer: "docker-build",
        kind: "para",
    },
    Q {
        text: "undo a bad history rewrite and get lost work back",
        answer: "git-rebase",
        kind: "para",
    },
    Q {
        text: "service restarting over and over after release",
        answer: "k8s-crash",
        kind: "para",
    },
    Q {
        text: "mail delivery problems",
        answer: "email-smtp",
        kind: "para",
    },
    Q {
        text: "broken special characters in a spreadsheet download",
        answer: "unicode-bug",
        kind: "para",
    },
    Q {
        text: "throttled by the remote service",
        answer: "rate-limit",
        kind: "para",
    },
    Q {
        text: "night theme for the interface",
        answer: "dark-mode",
        kind: "para",
    },
    Q {
        text: "scheduled task wrong hour after daylight saving",
        answer: "cron-timezone",
        kind: "para",
    },
    Q {
        text: "process memory keeps growing until it crashes",
        answer: "memory-leak",
        kind: "para",
    },
    Q {
        text: "localization of the user interface",
        answer: "i18n",
        kind: "para",
    },
    Q {
        text: "lookup fails for dashed terms",
        answer: "search-index",
        kind: "para",
    },
    Q {
        text: "duplicate billing",
        answer: "payments",
        kind: "para",
    },
    Q {
        text: "disaster recovery copies of our data",
        answer: "backup",
        kind: "para",
    },
    Q {
        text: "browser security error about https",
        answer: "tls-cert",
        kind: "para",
    },
    Q {
        text: "authentication test times out",
        answer: "auth-flaky",
        kind: "exact",
    },
    Q {
        text: "parse_rfc3339_ts",
        answer: "ts-parse",
        kind: "exact",
    },
    Q {
        text: "CrashLoopBackOff",
        answer: "k8s-crash",
        kind: "exact",
    },
    Q {
        text: "multi-stage Dockerfile",
        answer: "docker-build",
        kind: "exact",
    },
    Q {
        text: "reflog",
        answer: "git-rebase",
        kind: "exact",
    },
    Q {
        text: "SPF DKIM",
        answer: "email-smtp",
        kind: "exact",
    },
    Q {
        text: "429 Too Many Requests",
        answer: "rate-limit",
        kind: "exact",
    },
    Q {
        text: "idempotency key",
        answer: "payments",
        kind: "exact",
    },
    Q {
        text: "prefers-color-scheme",
        answer: "dark-mode",
        kind: "exact",
    },
    Q {
        text: "Let's Encrypt renewal",
        answer: "tls-cert",
        kind: "exact",
    },
    Q {
        text: "OOM killer",
        answer: "memory-leak",
        kind: "exact",
    },
    Q {
        text: "Latin-1 UTF-8 BOM",
        answer: "unicode-bug",
        kind: "exact",
    },
    Q {
        text: "la connexion échoue de temps en temps",
        answer: "auth-flaky",
        kind: "xlang",
    },
    Q {
        text: "receta de salsa de tomate",
        answer: "cooking",
        kind: "xlang",
    },
    Q {
        text: "Speicherleck im Server",
        answer: "memory-leak",
        kind: "xlang",
    },
    Q {
        text: "证书过期了",
        answer: "tls-cert",
        kind: "xlang",
    },
];
