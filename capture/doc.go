// Package capture records one agent step from raw provider output: it keeps
// the raw bytes beside the transcript (0600, with their size and sha256),
// optionally masks secrets in them line by line before anything is
// written, normalizes them through a plugin as they arrive, writes the
// events into the step, turns sub-agent scopes into linked child runs, and
// sets the step's result (transcript.AgentResult).
//
// It is the one capture pipeline: `twasm record`, `twasm import` and `twasm
// renormalize` all go through it, so the same bytes give the same
// transcript whichever command read them. Output that exists already (a
// file, a session log, a raw capture) goes through [Run]; a Go workflow
// engine that runs an agent CLI itself feeds the agent's stdout to
// [Agent.Feed] (and stderr to [Agent.FeedStderr]) inside a lifecycle step
// and calls [Agent.Finish] with the exit code, as `twasm record -- CMD`
// does. Either way the step function returns [ResultError] of the result
// (Run does it for you): an agent that ended in error or incomplete does
// not succeed ([ErrAgent]), the same way for every caller, and its step
// (and the run the error ends) records the agent's status: error, or
// incomplete when it stopped without a terminal event (spec 6.7). A
// sub-agent's child run ends with its own status the same way.
//
// The normalizer is a [Plugin]: a *host.Plugin as it is (sandboxed
// WebAssembly), or [NativePlugin] of an SDK plugin compiled in. The
// capture owns the instance it takes from the plugin and closes it when
// it finishes, or when Start fails after taking it (a host instance goes
// back to its plugin's pool); so every Agent that Start returns must be
// finished, whatever went wrong before (Run always finishes). Start opens
// the raw capture before it asks the plugin for an instance; when it
// fails after that, it removes the empty raw file it created, which no
// step refers to.
//
// A program records an agent's output with this package, through host or
// with a native normalizer. twasm's public packages are transcript,
// recorder, lifecycle, capture and host; a plugin author imports abi/sdk,
// abi and golden; each plugins/<provider> package exports its normalizer.
// Everything else in the module is internal (README, Layout).
//
// # Invariants
//
//   - Nothing is lost: every byte fed is in the raw capture (masked, when
//     [Options].Mask is set) whether or not the plugin understood it; a transcript
//     can be rebuilt from it later (renormalize).
//   - A new raw capture is framed (package internal/rawfile: "*.raw.zst",
//     independent zstd frames, written through rawfile.Writer); the raw
//     bytes are flushed into the file as a frame before any event made
//     of them is written (the sink's RawLines), before the early sync,
//     and at Finish, so a step's bytes begin a frame of their own and a
//     frame never holds two steps' bytes. [Run] reads a file a frame
//     (rawfile.FrameBytes) at a time, a full read written as one frame
//     before the plugin sees it, and feeds the plugin 256 KiB at a time
//     (the batches do not depend on the read's size); a caller that feeds
//     the plugin its own pieces (the archive, which dates each piece's
//     events) writes each frame it reads first with [Agent.Ahead], and
//     Feed then feeds the plugin those bytes without writing them again.
//     A capture continued
//     ([Options.ContinueRaw]) stays of its kind: an older twasm's plain
//     "*.raw" grows plainly; one that ends in a frame cut short is
//     refused (rawfile.ErrTorn). The step's RawRef states the raw bytes'
//     size and sha256, whichever kind holds them.
//   - With a Mask, no unmasked byte reaches the disk: raw capture,
//     stderr capture and events all see masked lines only. Masking works
//     on whole lines so a secret split across reads is still found.
//   - The raw capture never lags the transcript: with [Options].Split
//     (a secret split across streamed deltas) lines are held back only
//     while a later one may join them, and the lines an event comes from
//     are written before the event (the sink is a normalize.RawSink), so
//     a capture killed at any point leaves a raw capture holding every
//     line its transcript's events were made of.
//   - A session that grew is archived as a further step of the same run
//     ([Options.ContinueRaw]): the new bytes extend the run's existing raw
//     capture, whose RawRef then covers the whole file, and [Agent.Replay]
//     first feeds the part already archived to the plugin with its output
//     dropped, so a call from the earlier part pairs with its result in
//     the new one. Replay writes nothing, neither events nor raw bytes.
//     [Run] does the same with [Source].Replay (renormalize rebuilding
//     such a run part by part).
//   - A transcript that survives a crash names no lost capture: unless
//     the run's recorder never fsyncs (recorder.FsyncNever), raw/ (and
//     each parent created) is synced in its parent when it is made, and
//     Finish fsyncs the raw and stderr captures and then the entries they
//     rely on (the run's raw dir when a step created or continued a file
//     in it, and the raw dir's entry in raw/, whoever made it; a
//     continued file's step may have run under FsyncNever) before the step's
//     completion, which names them, is written. Files first: on ext4 the
//     directories' fsyncs then find their changes committed and cost
//     little (internal/durable). When [Run] reads a regular file, that
//     sync starts as soon as the file's last bytes are in the raw capture,
//     in a goroutine, while the plugin normalizes them; Finish waits for
//     it, syncs again what was written since, and reports its failure
//     even when its own sync then succeeds (a failed fsync is reported
//     only once). With [Options].EarlyEntries (record, whose plugin is
//     still loading when the capture starts) the entries Start created
//     are synced by Start itself, in a goroutine, before it waits for the
//     plugin's instance, and Finish waits for that sync (reporting its
//     failure the same way) instead of making it after the files'; an
//     entry made later (a stderr capture) is synced by Finish as before.
//     With FsyncNever flushing
//     is left to the system.
//   - stderr is kept, never parsed as provider output.
//   - The step's final status follows spec 6.7 (the process exit code is
//     passed to the normalizer, see package normalize), and the raw lines
//     the plugin said nothing about are reported ([Result]).
//   - Sub-agents become child runs of the step (lifecycle.Step.SubRun): a
//     step.call_workflow.* pair with child_run_id in the parent and
//     parent_run_id on every child line. A sub-agent whose name
//     [Options].Supersede maps to an earlier child run (of a step that
//     was interrupted) gets a child run that supersedes it
//     (lifecycle.SubRunOptions.Supersedes).
//
// # Concurrency
//
// An Agent is used by one goroutine at a time, except FeedStderr, which
// may run concurrently with Feed (a child process's two pipes).
package capture
