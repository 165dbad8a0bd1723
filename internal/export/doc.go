// Package export writes transcripts in the forms other tools read:
// OpenTelemetry spans ([ExportOTLP]), provider message lists
// ([ExportMessages]), run folders ([ExportDir]) and one self-contained
// page ([ExportHTML]). The HTML renderer also draws twasm serve's run
// page (package web, [HTMLOptions.Page]): the same events, tree and
// escaping; only the page's frame (styles and scripts linked, not
// inline), the anchors (#seq-N: one run per page) and child runs (linked
// to their own pages, not written inside their parent's) differ, and a
// served page may show one part of a long run ([HTMLWindow]: the events
// of a seq range, the steps open at its start opened again, a call whose
// result comes later saying so), so the two pages never drift.
//
// Model: an export walks a run's transcript file line by line, and the
// child runs it links to (step.call_workflow.* with child_run_id) in the
// same directory, by runtree's rules (depth first, each child once, at
// most runtree.MaxDepth deep): a child that cannot be followed (missing,
// a cycle, too deep, an invalid id, not a transcript) is left out and
// reported (DirReport.Skipped and OTLPStats.Skipped, a warning on the
// page, an attribute on the linking step's span), and the rest of the
// tree is exported. [Walk] is that walk for a format that reads a run's
// events in order (ExportDir does, and a new format written in its
// command's file can): it begins each run, gives it its events (masked
// when asked), ends it, and follows the links they name.
// Nothing holds a whole run: memory is bounded by what is open at one
// point of the file (steps, tool calls awaiting their results), so a run
// of any size exports in bounded memory. Runs written by older versions
// export too: every field is optional to the exporter, and lines the
// tolerant reader cannot decode are skipped (the validator reports them).
// The HTML page's first pass (its tree) reads only the outline of each
// message and tool event (transcript.DecodeOutline), which decodes and
// skips the very lines the full decoding does, so the tree and the page
// never disagree on which events exist.
//
// Invariants:
//   - An export never writes into storage; it only reads transcripts.
//   - Times come from the transcript (backfill keeps original times).
//   - OTLP ids are derived, not random: the trace id is the root run's
//     UUID, span ids hash the run id with the event's seq (and call id),
//     so that exporting again gives the same ids and spans exported by
//     separate processes (one `record --otlp` per step) link up.
//   - Content (what was said and done) leaves only when asked for
//     (OTLPOptions.Content); ids, names, models, usage and outcomes always.
//   - Tool calls pair with their results by transcript.Pairer's rule (a
//     provider may reuse a call id for a new call): the page's slots, the
//     run folder's tool log, the OTLP tool spans and the message lists
//     alike. A message list ([ExportMessages]) keeps every call of a
//     reused id, each with its own result; as both APIs refuse a tool
//     call id that repeats in a conversation, the second and later calls
//     of an id are written as <id>-2, <id>-3 (the first free such id) in
//     their call and result alike ([MessagesReport.Renamed]).
//   - A revised call or result (transcript.RevisedField: a new version
//     of an earlier one, written by the archive) is that call, counted
//     once, with its latest input and outcome: the run folder's tool log
//     has one line per call, of its latest outcome (a line written before
//     a revised result came is left out when the folder is finished, as
//     is its error line); a call revised before its result is one OTLP
//     span, opened at that version from its first version's time, and
//     OTLP and the message lists write the latest version of a call or
//     result at its first (a first pass reads the latest versions:
//     revisionsOf, or scanRun's); the page shows every version where it
//     is, each replaced one saying so, and the latest in the call's
//     slot.
//   - Child run ids read from files are checked as run ids before they
//     become paths; non-regular files are refused before they are opened.
package export
