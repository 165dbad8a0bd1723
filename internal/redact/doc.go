// Package redact masks common secret shapes in transcripts and raw
// captures: provider API keys, GitHub, AWS, Google and Slack tokens,
// bearer tokens in Authorization headers, and PEM private key blocks.
//
// A Redactor replaces each secret with "[REDACTED:<kind>]" and counts what
// it masked by kind; it never keeps or logs the value. It is a
// recorder.Options.Mask (Mask: every string of an event: block texts, tool inputs
// inside their JSON, outputs, errors, unknown fields) and masks raw bytes
// line by line (MaskBytes) for the raw capture.
//
// # Limits
//
// Redaction is pattern-based: it finds secrets of the shapes below and
// nothing else (a password typed into a prompt is not found). It is a
// safety net, not a guarantee; keep transcripts as private as the
// sessions they record.
//
// A Redactor is safe for concurrent use.
package redact
