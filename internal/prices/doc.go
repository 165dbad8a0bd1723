// Package prices is the price table twasm prices token usage with, and
// the money type every report uses.
//
// # Model
//
// A Table lists models (an id, aliases, the provider) with their rates in
// US dollars per million tokens, as decimal strings (input, output, cache
// read, cache write at five minutes and at one hour), optional tiers by
// the size of a request's input (long context: Claude Sonnet 4.5 above
// 200K, Gemini 2.5 Pro above 200K, Qwen's steps), and per entry the
// source URLs and the date they were checked, and the price of a request
// sent through the provider's batch API as a percentage of the standard
// one (batch_percent: Anthropic's Message Batches and OpenAI's Batch API
// bill 50%), of a request served at OpenAI's flex service tier
// (flex_percent) and the rates of its priority tier (priority, with the
// largest input they are stated for). The bundled table
// (prices.json, embedded) is the default; a newer file installed with
// `twasm prices update FILE` (Install: validated, then written to the
// user's config directory) replaces it whole. Nothing here touches the
// network.
//
// # Invariants
//
//   - Money is integer: rates parse exactly into pico-dollars per token
//     (six decimals of a dollar per million tokens; a rate with more is
//     refused), a price is an exact integer of pico-dollars, and reports
//     round to micro-dollars (Micro) once, at the end. No float is ever
//     summed.
//   - A model the table lacks is never priced 0: Price reports ok=false,
//     and the caller names the model as unpriced.
//   - A tier applies to one request: PriceRequest takes the usage of one
//     API request (a message); the usage of many requests summed (a
//     step's total) is priced at the base rates, and the result says the
//     tier could not be known when the total is above a threshold.
//   - A batch request (PriceBatch) is priced at batch_percent of every
//     rate, tiers included (cached input at its standard rate where
//     batch_cache_read_standard says the provider states no batch
//     discount for it), computed exactly (Parse refuses a percentage
//     that would leave a fraction of a pico-dollar per token); a model
//     without batch_percent is not priced for it (ok=false): a batch
//     request's cost is never guessed as the standard one.
//   - A request is priced at the service tier its response states
//     (PriceAt, transcript.Usage.ServiceTier): no tier, OpenAI's
//     "default" and "auto" (the project's tier, "default" unless
//     configured otherwise, OpenAI documents) and Anthropic's "standard"
//     at the standard rates; "batch" at the batch rates; OpenAI's "flex"
//     at FlexPercent of every rate, cached input and tiers included
//     (OpenAI bills flex at its Batch API's rates, with the cache's
//     discount on top); "priority" at the model's Priority rates, for a
//     request of at most their MaxInput. Any other case is not priced,
//     and PriceAt says why: a model without that tier's rates, a
//     priority request above MaxInput, Anthropic's priority tier (billed
//     through a capacity commitment: no per-token rate), OpenAI's scale
//     tier (reserved capacity), a total over requests of several tiers
//     ("mixed"), a tier no provider names.
//   - Tokens whose kind is not stated are never priced 0: a usage that
//     states no output but a total above its input (Gemini CLI's
//     stream-json result, whose thoughts are in the total only) is not
//     priced (ok=false; PriceAt's why is "output not stated").
//   - A rate the table leaves out is charged as the documented fallback
//     (cache read and five-minute write at the input rate, one-hour write
//     at the five-minute write): never as free.
//   - Model names match after normalization (Normalize): lower case, a
//     "vendor/" prefix, a "[...]" suffix (Claude Code's "[1m]") and a date
//     suffix (-20250929, -2025-08-07) removed; then the id or an alias
//     equals it. An id or alias that itself ends in a date names that
//     snapshot alone (gpt-4o-2024-05-13, priced above gpt-4o's later
//     snapshots) and is matched first, with the date.
//   - An alias takes every rate of its entry, tier rates included: a
//     model the provider states a different set of tier rates for (a
//     codex model at GPT-5's standard rates without its priority rate)
//     is an entry of its own.
//
// # Compatibility
//
// A price file may be read by a twasm older than the one it was written
// for (installed with a newer twasm's table, or shared), and must not be
// priced with what the older twasm does not understand ignored:
//
//   - A field in a model entry, at any depth (its rates, tiers, priority),
//     that this twasm does not know may change what the model costs
//     (a regional uplift, a new kind of token): Parse keeps the entry,
//     so that its names still match, records the field (Model.Unknown)
//     and the model is not priced, PriceAt saying which field; the file's
//     other models are priced. A newer twasm adds fields to entries
//     without changing the schema.
//   - A field at the file's top level this twasm does not know may
//     change every price (a currency): Parse refuses the file with
//     ErrNewerFormat, and so does it a later schema ("twasm.prices/2"),
//     which a newer twasm names when it gives a known field another
//     meaning. Load then uses the bundled table and says why; Install
//     refuses it.
//   - A field named "info_..." at any level is information that cannot
//     change a price: every twasm ignores it.
package prices
