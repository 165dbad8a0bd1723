// Package transcript is the pure domain model of a twasm transcript: the
// event envelope, the closed vocabularies of event types, block types,
// fidelities and step kinds, the payloads, a lossless line encoder and a
// tolerant decoder.
//
// The format is specified in shared/spec/transcript.md; this package is its
// executable form. Beside the standard library it imports only three
// internal helpers that import nothing else (its JSON string codec, the
// reading of an optional options argument, and internal/vocab: the path
// grammar, the step statuses and the older tool-status words, which
// twasm's own writers share), and it does no I/O of its
// own, so it can be reused anywhere (plugins, views, other tools).
//
// A program reads and validates a transcript with this package. twasm's
// public packages are transcript, recorder, lifecycle, capture and host; a
// plugin author imports abi/sdk, abi and golden; each plugins/<provider>
// package exports its normalizer. Everything else in the module is internal
// (README, Layout).
//
// # Model
//
// A transcript is one JSONL file per run. Every line is an [Event]: an
// envelope (seq, run_id, parent/child run ids, type, path, iteration,
// timestamp) and a payload whose Go type is chosen by the event type:
//
//   - run.*, step.*: [*StepPayload]
//   - message.user, message.assistant: [*MessagePayload] (ordered [Block]s)
//   - tool.call, tool.result: [*ToolPayload]
//
// # Invariants
//
//   - Writers cannot emit a value outside the vocabularies: [AppendEvent]
//     rejects an event whose type, block types,
//     fidelities, step kind or tool status are not valid, with an error
//     wrapping [ErrInvalidEvent]. A tool.result's status is one of ok,
//     error, denied, cancelled (spec section 4); files written before that
//     hold older words (completed, failed, declined...), which [Validate]
//     reports as warnings and [ToolOutcome] reads as their equivalents.
//   - Encoding is lossless for every byte string. Valid UTF-8 is written
//     as is (control characters escaped); each byte of an invalid UTF-8
//     sequence is written as a lone low surrogate escape \udc80..\udcff
//     (the "surrogateescape" convention of PEP 383), which [DecodeEvent]
//     turns back into the same byte. NUL, other control bytes and ANSI
//     escapes survive as \u0000-style escapes. A line never contains a raw
//     LF, so one event is always exactly one line.
//   - Decoding is tolerant: an unknown event type or block type decodes
//     with its type string intact and is reported with a typed error
//     ([*UnknownTypeError]) that a caller can treat as a warning (a
//     malformed line gives no event at all); unknown fields are kept in
//     Extra and written back unchanged.
//   - [Usage] has the same counters wherever it appears (spec §4):
//     input_tokens is every input token, cached or not, and
//     cache_read_tokens and cache_write_tokens are parts of it, as in the
//     first version of the format, so an older reader stays right. Beside
//     them, uncached_input_tokens (what the providers' consoles and ccusage
//     call "input"), cache_write_1h_tokens (the one-hour part of the cache
//     write, which Anthropic prices apart) and total_tokens (the total the
//     provider states, kept as stated). For a file written before they
//     existed, [Usage.Uncached] derives the uncached input from the other
//     three, and [Usage.Add] does so before summing, so a total over old and
//     new files counts every run's. Reports show uncached input, cache
//     read, cache write and output as separate counters. [Validate] reports
//     counters that disagree (usage_mismatch: the uncached input and the
//     cache parts not adding up to input_tokens, a one-hour write above the
//     write, a negative figure).
//   - A usage may also state service_tier, the tier the provider says it
//     served the request at, as the provider names it (OpenAI's "default",
//     "flex", "priority", "scale"; Anthropic's "standard", "priority",
//     "batch"): which rates bill its tokens. It is left out where the
//     provider states none, never guessed. A step's usage, summed over its
//     requests, has their common tier, or [ServiceTierMixed] when they
//     differ ([Usage.Add]); a message's (one request) is never "mixed"
//     ([Validate]: usage_mismatch).
//
// # Reading and validating
//
// [Reader] streams a file line by line (lines up to [DefaultMaxLineSize]
// unless [ReaderOptions] say otherwise), reporting malformed, too-long and
// torn lines as [*LineError] with their line number and going on with the
// next line ([Reader.Problems]); [ReadAll] collects everything. A pass
// that reads a whole run for its structure, not its content, reads it
// with ReaderOptions.Outline ([DecodeOutline]: the same lines decoded
// and refused, with the same problems, but of a message's and a tool
// event's payload only the blocks' types and fidelities and the call
// id, read in one pass over the line). [ToolOutcome] reads a
// tool.result's outcome in files of any version. [Validate] and
// [ValidateFile] check a whole file against the contract (seq order, run
// identity, run bracket, step and tool pairing, parent/child links) and
// return a [Report] of [Issue]s with stable codes. [Pairer] pairs tool
// calls with their results by call id, fed in file order: the one rule
// the validator and every reader in twasm (views, exports, index) follow,
// so that none counts a reused call id's calls differently ([PairEvents]
// pairs a run's events at once).
//
// # Revised calls and results
//
// An archived session's agent may change in place what it wrote before
// (a document rewritten at every turn, a database row updated): the
// archive then writes the changed message, call or result again, in its
// new version, with [RevisedField] ("revised": true) in its payload (a
// plugin may say so itself of a call or result, ABI 1.13: a Cline or Roo
// Code task's conversation element or UI message changed in place).
// Both versions stay in the transcript. A revised tool.call is a new
// version of the latest call of its id, and a revised tool.result of the
// latest result of its id, whose outcome it replaces: [Pairer.Feed] says
// so (again), and every reader counts such a call once, with its latest
// input and outcome ([Superseded] names the versions replaced,
// [PairEvents] pairs every version with the latest result). A
// transcript written before the mark existed holds the new version
// unmarked: read as a call of its own, it still counts twice (the
// earlier version dangling) until the session is archived again.
//
// # Ownership and concurrency
//
// Values in this package are plain data with no hidden sharing: a decoded
// [Event], json.RawMessage fields included, owns its memory and does not
// alias the line it came from, so a [Reader] can reuse its buffer.
// Functions are safe for concurrent use; values are not synchronised.
package transcript
