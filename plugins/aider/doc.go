// Package aider is the twasm normalizer for Aider's chat history. It is
// a plain Go package (tests, fuzzing and the native baseline run it
// through sdk.Plugin.Driver); plugins/aider/wasm is the two-line
// WebAssembly entry point.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/aider/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library).
//
// # Store
//
// Aider appends every session to .aider.chat.history.md in the
// repository it runs in, and never deletes one. The manifest declares it
// as a "sections" store (abi.StoreKindSections) in every project
// directory (abi.Root.Projects), split at "# aider chat started at ":
// `twasm sync` archives one run per session. `twasm import` of the file
// makes one run of all of it: the plugin reads any number of sessions in
// one stream (their costs added, see Usage).
//
// Project. Nothing in the file names the repository: Aider writes the
// history at the git repository's root (its working directory outside
// one), so the directory holding the file is the run's project. The
// plugin asks for the host's facts line (abi.SourceFacts), which names
// the project directory the store was found in (ABI 1.8), and reports
// it as the step's project; the line is declared ignored, and one
// before what a session appended since (inside an answer, perhaps)
// leaves the answer as it was. `twasm import` hands no facts line: the
// run has no project.
//
// # Format
//
// Markdown, not JSON; the line's first characters say what it is:
//
//   - "# aider chat started at YYYY-MM-DD HH:MM:SS": a session starts.
//   - "#### text": a line of the user's prompt (a prompt of several lines
//     is several such lines), or an in-chat command ("/add", "/run",
//     "!ls", "/ask ...").
//   - "> text": Aider's own output (newer versions end it with two
//     spaces, a markdown line break): its version, the model, the
//     repository, confirmations ("... (Y)es/(N)o [Yes]: y"), "Applied
//     edit to <file>", "Commit <sha> <message>", "Unable to commit: ...",
//     "Tokens: 3.2k sent, 1.1k cache write, 2.0k cache hit, 222 received.
//     Cost: $0.01 message, $0.05 session.", litellm errors
//     ("litellm.RateLimitError: ...") and "Retrying in N seconds...". A
//     line of it that held a line end (a launch command with a multi-line
//     --message) goes on without "> ".
//   - anything else: the assistant's answer, markdown, with the edit
//     format's SEARCH/REPLACE blocks (the file's name on the line before
//     the fence, "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE").
//
// There are no ids, no times but the session's start (local time, no
// zone: the host dates the run by it) and no structured tool calls.
//
// # Decisions
//
// Messages. Consecutive "#### " lines are one user prompt. The text
// after it, up to Aider's next line, prompt or session, is one assistant
// message (blank lines inside kept), of the session's model. The
// reasoning Aider writes before a reasoning model's answer, between its
// tags "<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>" and
// "</thinking-content-...>", each on a line of its own (Aider's
// format_reasoning_content), is the message's thinking block, the rest
// its text; the tags' lines are declared ignored, and a SEARCH/REPLACE
// block in the reasoning is a draft, no edit. An answer cut by Ctrl-C
// before the closing tag is thinking alone. Text before
// any prompt (a note at the top of the file) and the rest of one of
// Aider's lines are declared ignored, as are blank lines.
//
// Tools. Aider's actions are its calls, each with its result on the same
// line (a failed edit's on its reason's), ids "aider-<n>" in order:
// "Applied edit to <file>" is a call "edit" (kind edit) whose input is
// the path and the SEARCH/REPLACE blocks of the answer before it that
// name that file; "The LLM did not conform to the edit format." (older
// versions: "Malformed response #N, retrying...") and "Exception while
// updating files:" (an exception while Aider wrote the edits, its text on
// the next line; apply_updates applies none) an "edit" that failed,
// whose input is the answer's blocks no "Applied edit to" took (Aider
// announces none when one block failed, though it wrote the others: its
// reason says how many) and whose error is that line and the reason Aider
// prints next, after the help page's address ("No filename provided
// before ``` in file listing", "# 1 SEARCH/REPLACE block failed to
// match!"). That reason is the first line of Aider's reflection, the
// message it sends the model back, whose other lines go on without "> ",
// blank lines and the failed blocks quoted among them, up to its rule
// "The SEARCH section must exactly match ..." or, when other blocks were
// applied, up to "Just reply with fixed versions of the block(s) above
// that failed to match." after "# The other N SEARCH/REPLACE block(s)
// were applied successfully.": all of it is Aider's (declared ignored),
// neither an answer nor an edit; the model's reply after it is the next
// answer. (The reflection of older versions after "Malformed response"
// has no such end: its lines after a blank one read as an answer.)
// "Commit <sha> <msg>" a call "git_commit" (kind execute), ok; "Unable to
// commit: ..." a git_commit that failed; a confirmation a call "confirm"
// whose input is the question and whose output is the answer, declined
// (denied) when the answer is no, skip or don't ask again ("d": Aider's
// confirm_ask refuses and never asks again). When the user types a word
// ("all", "skip"), Aider writes it first as a "#### " line holding the
// question and the word, then the confirmation as its own line with the
// answer it took: that "#### " line is no prompt (declared ignored).
//
// Shell commands. When the user allows the commands an answer suggests
// ("Run shell command? ... y", "Run shell commands? ... y"), Aider writes
// "Running <command>" for each before it runs it: a call "shell" (kind
// execute, the command line its command). Aider logs neither a command's
// exit status nor its output (only, when the user adds it to the chat,
// "Added N lines of output to the chat."), so the call has no result
// (dangling, and a session that ends on it reads incomplete, spec 6.7:
// a result without a status would read as ok), and a warning says so;
// "Error running command: ..." right after it (run_cmd could not start
// it) is its result, an error, and a Ctrl-C right after it cancels it.
//
// Commands. A user message that starts with "/" or "!" is an in-chat
// command (Aider reads any such input as one, refusing an unknown name
// with "Invalid command"). The commands that send the model a request
// (/ask, /code, /architect, /context, /help, /test and /lint, which ask
// for a fix when they fail, /ok) are prompts; the others (/add, /drop,
// /run and "!", /copy-context, /undo, /exit, an unknown name; a path
// such as "/tmp/app.log" is read as the user's words), which Aider
// carries out itself, are the user's word to Aider, written with origin
// injected_context as Claude Code's local slash commands are: a session
// that ends on one does not end on a prompt waiting for an answer.
//
// Architect mode ("Model: X with architect edit format", or a one-off
// "/architect ..."): Aider hands the architect's answer to the editor
// model as its request and writes it again as "#### " lines (the editor
// coder's input, its first line the answer's first line of text). Such
// a user message is the architect's words, injected context, not a
// prompt; the answer after it is the editor's, of the model "Editor
// model:" names.
//
// Usage. A "Tokens:" line is one reply's usage, added: "sent" is every
// input token (Aider counts the cache read and written in it), "cache
// hit" and "cache write" its cached parts, "received" the output. The
// cost is Aider's "session" figure (set: it holds the session so far),
// plus what the earlier sessions of the stream cost. Aider prints tokens
// rounded ("3.2k", "12k") and dollars to two or a few places: the step's
// usage and cost are what it printed, and a warning says so.
//
// Errors. A "litellm.<Class>: message" line is a provider error (code
// the class), listed in the step's errors; "Retrying in ..." lines
// after one are declared ignored. "Model <name> has hit a token limit!"
// (show_exhausted_error: the context window or the output limit was
// exhausted and the request ended; its figures and advice follow as
// Aider's notices) is a provider error, code token_limit, and so is
// "Empty response received from LLM. Check your provider account?" (the
// model answered nothing), code empty_response. What Aider prints with
// an error it gives up on is the error's report, not the session going
// on: its offer to open the error's documentation URL (check_and_open_urls,
// io.offer_url's own question "Open URL for more info?") right after an
// error is declared ignored, not a confirmation (a model warning's "Open
// documentation url for more info?" stays one). An exception Aider
// caught while sending the message (base_coder.py send_message prints
// traceback.format_exception of it, then str(err), and gives the message
// up) is a provider error, its message the traceback's last "Class:
// message" line's, code the class, reported at the str(err) line (else
// where the traceback ends: at Aider's next event, a line not of Aider's,
// or the end of the input); a traceback after an error (litellm's errors
// carry their cause's) is that error's. A chat history has no terminal record:
// the step is reported with NoTerminal and the host settles its status
// by the session rule of spec §6.7 (an error after the last answer is
// error, an unanswered prompt incomplete). A history read in the middle
// of a turn cannot be told from a finished one: Aider appends the
// answer once it is whole and writes no turn's end. Aider's other notices (the
// repository, files added, hints, interrupts) are declared ignored:
// what the session did is in the prompts, answers and calls.
package aider
