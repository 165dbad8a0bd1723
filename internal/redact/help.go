package redact

// FlagUsage is the usage line of every --redact flag that masks what a
// command writes.
const FlagUsage = "mask secrets everywhere before writing (what is and is not masked: twasm help redact)"

// Help says what --redact masks and what it does not: `twasm help
// redact`.
const Help = `--redact masks secrets before anything is written or exported: with record,
import and sync, the transcript, the raw capture and the agent's stderr (so
the search index, built from the transcript, and every later export hold
none); with export html, dir, messages and otlp, everything exported. A
secret is replaced by [REDACTED:<kind>] and counted by kind on stderr (and
in record --json).

Masked (by pattern):
  - gitleaks' default rule set (` + gitleaksVersion + `, built in): keys and tokens of cloud
    providers and services (AWS access key ids, GCP, Azure, GitHub, GitLab,
    Slack, Stripe, OpenAI, Anthropic, npm, PyPI, Twilio and about 200 more),
    JWTs, private keys, and high-entropy values assigned to names such as
    password, passwd, secret, token, key, auth, credential
  - AWS secret access keys, beside their key id or assigned to a name that
    says so (aws_secret_access_key, SecretAccessKey)
  - passwords in URLs and DSNs (postgres://user:PASSWORD@host, https://
    user:PASSWORD@host), bearer tokens (Authorization: Bearer ...)
  - in JSON, what the strings mean, not how they are written: \u escapes
    are decoded, and JSON held in a string (a tool's arguments) is opened
  - in a raw capture, a secret that streaming split across deltas of one
    field ("sk-pro" then "j-Tq7..."), the deltas following one another
    (the raw capture holds back the last 512 bytes of a streaming field
    until the next delta says whether a secret goes on, and writes them
    before any transcript event made of them)

Not masked:
  - a secret of no known shape: a short or low-entropy password ("hunter2"),
    a passphrase of words, a value whose name does not say it is secret
  - an encoded secret (base64, hex, URL-encoded), or a streamed tool input
    whose \u escapes are cut between deltas
  - in a raw capture, a secret split over more than 4096 lines, over
    deltas 32 lines apart, or across the end of a message (the
    transcript, which holds the joined text, is masked)
  - run and step paths and run ids, which the format needs as they are
  - what is already stored: a run recorded without --redact keeps its
    secrets in its files (its exports can still be masked with --redact)

It is a safety net, not a guarantee: keep transcripts as private as the
sessions they record.`
