// Package redact masks secrets in transcripts, raw captures and exports
// (`--redact`): keys and tokens of cloud providers and services, JWTs,
// private keys, high-entropy values assigned to names such as password or
// token (gitleaks' default rule set, generated into gitleaks_rules.go by
// internal/tools/genredact), and what that set leaves out: AWS secret
// access keys, passwords in URLs and DSNs, bearer tokens. [Help] says
// what is and is not covered; `twasm help redact` prints it.
//
// A Redactor replaces each secret with "[REDACTED:<kind>]" and counts what
// it masked by kind; it never keeps or logs the value. It is a
// recorder.Options.Mask (Mask: every string of an event: block texts,
// tool names and ids, tool inputs inside their JSON, outputs, errors,
// unknown fields; not run and step paths, whose grammar a mark would
// break), and masks a line of a raw capture or any text (MaskBytes).
//
// # What text means, not how it is written
//
// JSON (a raw capture's line, an SSE data: line, a tool input) is masked
// in what its strings mean: each string is decoded (a \u escape hides
// nothing) and JSON held in a string is opened, and the rules see the
// text with the decoded strings in place, so that the key a value is
// assigned to ("password": "...") is its context. Only a string that
// held a secret is encoded again; every other byte is kept.
//
// Streaming splits secrets: a text delta may end in "sk-pro" and the
// next begin with "j-Tq7...". The plugin joins them (so the events, and
// the transcript, are masked whole), but the raw capture holds the
// lines. A [Stream] masks a raw capture: it joins the strings of its
// lines by JSON path, looks for secrets across each join, and holds back
// only the lines a later delta may still join (the last 512 bytes of a
// field that is streaming, and the lines after them; never more than
// 4096 lines or 16 MiB) until it knows what to cut from each. The
// capture releases held lines sooner when an event made of them is
// written (package capture), so the raw capture never lags the
// transcript, even when the process is killed.
//
// # Cost
//
// The rules are compiled lazily: nothing at start-up, and each rule's
// expression the first time text holds one of its keywords (found in one
// pass over the text). A twasm command without --redact never compiles
// one; gitleaks itself (and viper, TOML, HCL) is not linked in.
//
// # Limits
//
// Redaction is pattern-based: it finds secrets of known shapes and
// nothing else (a password typed into a prompt is not found). It is a
// safety net, not a guarantee; keep transcripts as private as the
// sessions they record.
//
// A Redactor is safe for concurrent use; a Stream is used by one
// goroutine at a time.
package redact
