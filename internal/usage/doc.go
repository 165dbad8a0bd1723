// Package usage makes the usage reports (twasm usage; the web app calls
// it too): tokens and cost by day, week, month, session, model or
// provider or project, from each run's Ledger.
//
// # Model
//
// A Ledger is what one transcript adds: its head and links (parent,
// child runs, what it supersedes, what it was rebuilt from) and its usage
// in rows of a quarter-hour, a provider and a model, and the cost of each
// agent step (Ledger.Steps: what twasm view's footer shows), each priced
// when the ledger is made (LedgerOf) with the price table in force
// (internal/prices). The index keeps ledgers per transcript
// (index.Derived, keyed by the table's digest too), so a report over a
// large archive reads only what changed.
//
// Build folds ledgers into a Report: each top-level run is a session,
// its child runs (sub-agents) counted with it and given its provider; the
// rows the filters select (time, provider, model; the session's project,
// its root run's else its first sub-agent's, a directory or below it) are
// added to their group and to the total.
//
// # Invariants
//
//   - A session is counted once: a run a renormalize rebuild stands for
//     (views.Superseded, deciding by the time of each run's tree, its
//     file's and its child runs', as ls and stats do) is left out, and so is a run another supersedes
//     and its own child runs, as stats and ls leave them out; a run
//     recorded from an agent's output whose sessions a run archived from
//     the agent's store holds (Ledger.Sessions, Ledger.Archived:
//     views.Superseded) is counted in that run only.
//   - Every grouping counts the same rows, and each row's cost is rounded
//     to micro-dollars before it is summed: the groups of any grouping
//     add up to the same total, to the micro-dollar.
//   - Cost has its provenance (Cost.Source): a cost the provider stated
//     for a step stands for the step's figures (they are not priced
//     again); other figures are priced from the table, per message where
//     the messages' usage adds up to the step's (one request each, at its
//     own long-context tier), else the step's total at the base rates
//     (Cost.TierUnknown counts them when above a tier). A model the table
//     lacks is named in Cost.UnpricedModels and adds nothing to MicroUSD:
//     its cost is unknown, never 0. So is a figure with tokens of a kind
//     not stated (no output, a total above the input: Gemini CLI's
//     stream-json run whose model thought), named "<model> (output not
//     stated)"; its tokens still count.
//   - A sub-agent's cost is counted once. Claude Code's stated cost (a
//     result line's total_cost_usd, a session log's cost-state) is the
//     process's cost tracker, which counts every call the process made,
//     its sub-agents' included (views.StatedCostCountsSubRuns); the child runs
//     linked from inside such a step, and theirs, are listed in the
//     parent's Ledger.Covered, and their rows keep their usage but add no
//     cost: they count as stated, at 0, wherever they are grouped (by
//     model, a sub-agent's model shows its tokens and 0; its cost is in
//     the parent's row). A step that states no cost, or a provider whose
//     stated cost is the step's own, leaves its child runs priced.
//   - A figure is priced at the service tier its usage states
//     (transcript.Usage.ServiceTier, prices.Table.PriceAt): OpenAI's flex
//     and priority at the model's flex and priority rates (counted in
//     Cost.Flex and Cost.Priority), Anthropic's batch at its batch rate;
//     no tier, "default", "standard" and "auto" at the standard rates. A
//     step whose capture is a batch job's results (BatchFormat: the
//     output file of OpenAI's Batch API, the results of Anthropic's
//     Message Batches) is priced at the model's batch rate whatever its
//     bodies state, counted in Cost.Batch. A tier whose rate the table
//     lacks for the model (a flex or priority request of a model without
//     them, a priority request above the input its rates are stated for,
//     Anthropic's priority tier, OpenAI's scale tier, a step total over
//     requests of several tiers) is unpriced, named "<model> (<why>)":
//     "gpt-4.1 (no flex rate)", "gpt-4o-mini (no batch rate)"; never
//     priced at the standard rate.
//   - A run whose ledger says it could not be read (Ledger.LoadErr) is
//     counted nowhere and listed in Report.Unreadable with why.
//   - Money is integer micro-dollars (Cost.MicroUSD), with its decimal
//     text (Cost.USD); never a float.
package usage
