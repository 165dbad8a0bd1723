// Package web is twasm serve: a local, read-only web app over a storage
// root. The transcripts stay the truth; the index (package index) serves
// the lists and the search.
//
// # Pages
//
//   - / lists every top-level run newest first, a page at a time from
//     the index (keyset on the start time and run id: no transcript is
//     read to list), filtered by project, agent, model, status and day;
//     each row is titled by the run's first prompt and shows its tool
//     calls and errors (index), and its tokens and cost with its child
//     runs' as ls counts them (views.SummarizeDigests over the digests
//     the index caches). Open runs (archived sessions that may grow) are
//     marked. A run another holds again is left out as ls leaves it out
//     (index.ListQuery.Superseded: views.Superseded's rule, among them a
//     run recorded from an agent's output whose session sync archived);
//     ?superseded=1 (a checkbox of the filters) lists it, marked, as ls
//     --superseded. Its own page opens either way.
//   - /s/RUN is a run's page, rendered by package export's HTML renderer
//     (the one export html uses: HTMLOptions.Page changes only the page's
//     frame, the anchors #seq-N and child runs linked to their own
//     pages), with a link to the line behind each event (/raw/RUN/SEQ:
//     the transcript line and the provider's raw line). A long run is
//     shown a part at a time (?part=K: partEvents events by seq,
//     export's HTMLWindow), so that a run of 20,000 events opens as fast
//     as one of a thousand: the steps open at a part's start are opened
//     again, a call whose result is in a later part says so, and links
//     lead to the other parts. A search hit links to its event's part
//     (eventHref); a #seq-N link without the part is taken to it by the
//     page's script (serve.js). The first pass that draws the run's
//     tree still reads the whole transcript, but only the outline of
//     each message and tool event (transcript.DecodeOutline): a
//     20,000-event run's page took 231-251 CPU-ms to serve with every
//     event decoded whole, 41-42 with outlines.
//   - /search is twasm search with its filters (--project as the
//     list's project values: that directory or below it; superseded=1
//     as --superseded: the hits of runs another holds again too, each
//     marked as the list marks the run); each hit links to its run's
//     page at its event. A page of hits whose words
//     and filters match more messages than the index ranks
//     (index.DefaultRankAmong) says its hits were ranked among the
//     newest (#ranked). "More hits" is the next page, from the index's
//     cursor of the last hit shown (from=, index.Cursor): it costs what
//     the first page did.
//   - /usage is twasm usage as charts: usage.Build's reports by day,
//     model and agent, and by project (for each project the index names
//     a session's, usage.Build's total over that project's sessions, so
//     the projects add up to the total), each an SVG bar chart drawn on
//     the server (attributes and serve.css: no script, no inline style)
//     over a table of the exact figures (cost as usage's decimal text,
//     its source, the models of unknown cost named). Its filters are
//     twasm usage's --since, --until (a day, included), --provider and
//     --model as query parameters; days are cut in Options.Location
//     (time.Local unless set: servecmd's --timezone), as twasm usage
//     cuts them, and the page names the zone; the other pages show
//     times, and cut the list's days, in UTC as export's page does.
//     Options.Usage gives it the ledgers as twasm usage loads
//     them (servecmd: the index, else the files); the page computes no
//     figure of its own.
//   - /live/list and /live/s/RUN are server-sent event streams telling an
//     open page that what it shows grew (see live.go); the page fetches
//     itself again.
//
// # Threat model
//
// Transcript content is hostile text: a prompt, a tool's input or
// output, a file name may hold markup, script, javascript: links,
// terminal escapes and bidirectional controls. The page answers:
//   - Every text from a transcript is escaped for where it goes:
//     html/template's contextual escaping on the lists, export's esc on
//     the run's page, after views.StripEscapes (terminal escapes removed,
//     control and bidi characters shown as [U+XXXX]). No transcript text
//     becomes an address: links are built from run ids checked by
//     runid.Valid and from numbers.
//   - Every response carries a Content-Security-Policy that allows only
//     the server's own script, style and connections (no inline script
//     or style, no 'unsafe-inline', no eval), frame-ancestors 'none',
//     form-action 'self', with X-Content-Type-Options: nosniff, so that
//     markup that escaped the escaping could still run nothing. Pages,
//     styles and scripts are embedded in the binary: nothing is fetched
//     from elsewhere.
//   - Read-only: only GET and HEAD are answered; no handler writes to the
//     storage (the index, a cache of the transcripts, is brought up to
//     date as search does). A run id in an address is checked
//     (runid.Valid) before it names a file, and only regular files are
//     read; a raw capture path must be local to the storage root.
//   - Who may ask: by default the server listens on 127.0.0.1 and
//     answers only requests whose Host is a loopback name (a site whose
//     DNS name is rebound to 127.0.0.1 sends its own name). Any other
//     listen address requires a token (generated and printed, or given),
//     checked in constant time on every request, from the Authorization
//     header, a SameSite=Strict HttpOnly cookie, or the address once (the
//     server then sets the cookie and redirects to drop it from the
//     address). The token travels in clear over HTTP: on an untrusted
//     network put TLS in front.
//   - --redact (Options.Redact) masks secrets in everything served: the
//     run's page (redact.Redactor.Mask on every event, failing closed on
//     a line it cannot decode), titles, names, projects, the usage
//     page's keys and model names, raw lines, and
//     search hits, whose snippet is cut from the masked whole text (a
//     snippet cut from the index could cut a secret so that no rule
//     knows it).
//
// # Lifetime
//
// Serve answers until its context ends (SIGINT, SIGTERM in twasm
// serve), then shuts down: the live streams end with the context, other
// requests get five seconds. The server starts no goroutine of its own
// beyond http.Server's.
package web
