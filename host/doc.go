// Package host runs twasm normalizer plugins: WebAssembly modules that
// follow the contract of package abi, executed by wazero in a sandbox.
//
// A program that runs wasm plugins imports this package, and hands a plugin
// to capture. The bundled plugins come from internal/bundled, which embeds
// internal/bundled/wasm: build output of make, so a program built without
// it gets none and New says so ([ErrNoBundledPlugins]); the alternative,
// the native normalizers of plugins/<provider> run in process without the
// sandbox, is in the README (Using twasm as a library). twasm's public
// packages are transcript, recorder, lifecycle, capture and host; a plugin
// author imports abi/sdk, abi and golden; each plugins/<provider> package
// exports its normalizer. Everything else in the module is internal
// (README, Layout).
//
// # Model
//
// A process makes one [Runtime] with [New] from [Options]. New
// loads the plugins built into the binary (bundled) and the external
// plugins found on the plugin path ([DefaultPluginPath]: a flag's
// directories, TWASM_PLUGIN_PATH, os.UserConfigDir()/twasm/plugins), and
// maps each provider name to the one [Plugin] that claims it
// ([Runtime.Lookup]); [Runtime.Load] loads a module from bytes. A Plugin
// is a compiled module, its [abi.Manifest] and a pool of initialized
// instances. A program hands the Plugin to package capture as it is (it is
// a capture.Plugin): each capture takes an instance with
// [Plugin.NewInstance], which serves one stream at a time (begin, feed*,
// end, through internal/normalize), and closes it back into the pool.
//
//	rt, err := host.New(ctx, host.Options{PluginPath: append(flagDirs, host.DefaultPluginPath()...)})
//	defer rt.Close(ctx)
//	p, err := rt.Lookup(ctx, "claude") // *UnknownProviderError
//	res, err := capture.Run(ctx, step, src, capture.Options{Provider: "claude", Store: store, Plugin: p})
//
// Loading a plugin: sha256 of the bytes; a structural check of the bytes
// (package internal/wasm/wasmcheck); compile (wazero's compilation cache under
// os.UserCacheDir()/twasm/wazero makes every run after the first cheap);
// check the exports and their exact signatures, the memory export, and
// every import (only wire.HostModule functions and wire.AllowedWASI);
// instantiate once; check twasm_abi_version; read and validate the
// manifest. [Runtime.Verify] runs the same checks plus an empty stream and
// reports every problem, for `twasm plugins verify`; [Runtime.List]
// describes every plugin found, loaded or not; [Runtime.Stores] lists the
// native session stores the plugins declare (ABI 1.4), for `twasm sync`
// and `twasm doctor`, from the manifests New already knows, compiling
// nothing.
//
// New loads no plugin it can avoid: it maps providers from manifests it
// already knows and a plugin is loaded on its first Lookup, or in the
// background from New on for the providers of [Options].Preload (New
// fails at once for one no plugin serves), so that a program's own start
// overlaps the load and its Lookup waits for what is left. A bundled
// plugin's manifest and sha256 are recorded by the build ([Bundled]; the
// module must report that manifest when it loads, and when it writes the
// very bytes the build recorded, the manifest the build parsed from them
// is taken without parsing them again), so even an empty
// compilation cache costs one compilation, of the plugin in use. An
// external plugin's manifest is cached by its content (crc32c and size)
// after its first load; only a file seen for the first time is loaded at
// New. An external plugin that fails to load is remembered too, by the
// same key confirmed by its sha256: later runs skip
// it with one warning saying why, until the file changes or the time or
// memory limit is raised above the one it failed under.
//
// # Invariants
//
//   - A plugin that reaches past the contract is refused at load, before
//     it runs: a WASI function outside wire.AllowedWASI (a file system, a
//     socket), a host function that does not exist, another ABI major
//     version, a missing or mistyped export. The error names the import or
//     export and what was expected.
//   - A provider belongs to one plugin. Two external plugins claiming it
//     make Lookup fail with both files named. A bundled
//     and an external plugin claiming it do not disable it: the bundled
//     plugin keeps it and a warning names the external file, unless
//     [Options].ExternalOverridesBundled is set (twasm's
//     --plugin-override), in which case the external one wins: dropping a
//     file in a directory must neither silently change how a provider is
//     normalized nor stop it from working.
//   - Records an instance returns are well-formed (the host checks every
//     output chunk as it arrives: whole records whose fields decode as
//     wire.Decoder reads them, every span inside the call's input;
//     checkRecords walks the bytes without building the records the
//     assembler decodes afterwards), so the assembler can trust them.
//   - A fault never takes the host down and never loses what came before
//     it: records reported before the fault are returned, the module is
//     discarded, and the stream carries on with a fresh one.
//
// # Concurrency
//
// [Runtime] and [Plugin] are safe for concurrent use. An instance is
// not: one goroutine at a time, like the WebAssembly module under it.
// Instances never share a module, so streams are isolated from each other:
// a module's memory holds one stream's state only, and Begin resets it
// before the next stream. The pool bounds idle instances, not concurrency:
// NewInstance never blocks; it instantiates when the pool is empty (about
// 5-35 ms and 4-8 MiB per instance). The bound (Options.PoolSize) holds
// for each plugin and for the Runtime's plugins together: the idle
// instances of the plugins given one back least recently are closed
// first, so a sync that goes from one provider to the next keeps the
// instances of the providers it is at, not of every one it has been at.
//
// # Threat model
//
// An external plugin is untrusted code. It is arbitrary WebAssembly
// compiled to native code by wazero and run in the host process. Its file
// is untrusted input too, read before any of its code runs.
//
// It cannot:
//   - crash or stall the host with a crafted file: before wazero decodes a
//     module, internal/wasm/wasmcheck walks its sections and every vector a
//     decoder allocates for, and refuses a module of more than 64 MiB, or
//     whose counts and lengths do not fit in the bytes that follow them or
//     exceed the JavaScript engines' limits (a 23-byte file claiming 2^32-1
//     element segments made wazero reserve memory until the Go runtime
//     aborted); the error names the file. What wazero then reserves is
//     bounded by a small multiple of the file's size, plus at most 80 MB
//     of tables and the memory page limit at instantiation. Every table
//     the module defines is then given a maximum (wasmcheck.BoundTables),
//     the maxima summing to 80 MB of references: wazero grows a table
//     that has none to 2^32-2 elements, and one table.grow would ask for
//     32 GiB and end the process (Go's linker writes its table with no
//     maximum); past the maximum the grow fails in the guest (-1). A
//     function, imported function or tag whose type index is out of
//     range is refused too (a call to such a function made wazero's
//     validator panic), and a panic of wazero's while it compiles a
//     module, on the loading goroutine, fails the load instead of
//     ending the process;
//   - read or write files, open sockets, read environment variables or
//     arguments: no file system, environment or arguments are ever
//     configured, and importing a WASI function that could reach them is
//     refused at load; stdout is discarded;
//   - read or write host memory: it sees only its own linear memory;
//     every (ptr, len) it passes to the host is bounds-checked, and a bad
//     one faults the call (a contract violation) rather than panicking the host;
//   - use more than the memory limit (default 128 MiB per instance,
//     [Options].MemoryLimit, twasm's --plugin-memory): the runtime
//     refuses to grow memory beyond it and the plugin traps
//     (out of memory). On Linux an instance's memory is one reserved
//     MAP_NORESERVE mapping of the limit, grown in place and committed
//     page by page as the guest touches it; a module closed at a deadline
//     has its pages dropped at once and the mapping unmapped only when
//     nothing can reach it, since its code may still be running;
//   - make the host misread its data: the host rewrites a module before
//     compiling it (data segments merged by internal/wasm/wasmdata, the
//     interrupt added by internal/wasm/wasminterrupt); both rewriters refuse
//     what they do not fully decode, and the module is then used as it is.
//     wazero validates the rewritten bytes as it would the original;
//   - run longer than its time limit, whatever its instructions: every
//     call, bundled plugins' too, gets the call timeout (default 5 s,
//     [Options].CallTimeout, twasm's --plugin-timeout) once per MiB of
//     its input, started, so a plugin working through an 8 MiB line is
//     not taken for a loop; _initialize gets at least 30 s. The
//     module is instrumented (internal/wasm/wasminterrupt; bundled modules by
//     the build): an interrupt flag the host sets at the deadline or when
//     the caller's context ends, read at yields to the host that come
//     every wasminterrupt.Fuel checks, checks that run at loop heads, at
//     the entry of functions that call, and before every bulk memory or
//     table instruction, charged by its length (a memory.fill of 64 MiB is
//     worth more than Fuel checks, so the flag is read after each; a
//     short fill or copy the rewriter does with stores of its own is
//     bounded by them, as straight-line code is, and not charged). Host
//     functions, sleeps and the random source stop an interrupted call
//     too, so a loop of long host calls ends as well; deep recursion ends
//     at the entry checks or in the engine's stack limit. A stopped call
//     ends within a few milliseconds of its deadline plus the longest
//     single instruction, host call or sleep (10 ms), which the charges
//     bound. BenchmarkStopLatency measures how late (tests check that a
//     call is stopped and how, never how soon); on the 2-core reference
//     VM, quiet, a spinning loop or a loop of host calls stopped 3-5 ms
//     late on average and at most 9 ms, and a 64 MiB memory.fill (one
//     instruction) 27-36 ms on average and at most 52 ms; a loaded
//     machine stretches both. A module the rewriter cannot instrument runs as it is, with
//     wazero's context-based termination (about 3x slower), checked at
//     every loop head and function entry. The time limit error says which
//     limit was hit and how to raise it ([Options].TimeoutHint);
//   - pass its failure off as the user's: a proc_exit from a plugin, with
//     any code (even the codes wazero itself uses for a cancelled or
//     expired context), is a fault of the call (a trap), not a
//     cancellation; the lines it held are counted as lost and said;
//   - flood the host: output above max(wire.MinOutputBytes,
//     wire.MaxOutputFactor x input) per call faults (limit exceeded); a fail
//     message is cut at wire.MaxFailBytes; log messages are cut at 1 KiB
//     and rate-limited per plugin; stderr keeps its first 1 KiB and last
//     3 KiB;
//   - see another stream: each stream runs on its own module;
//   - fault forever: after [Options].MaxFaults consecutive faults
//     (default 5) the plugin is disabled: its calls fail with an error saying so;
//   - cost every command its failure: a file that failed to load is
//     skipped by later runs until it changes (see the failure cache
//     below);
//   - take a provider from a bundled plugin unless the user says so
//     (--plugin-override);
//   - make twasm read files outside the agent stores it is allowed: the
//     stores a manifest declares (ABI 1.4, [Runtime.Stores]) are
//     untrusted input, checked at load (checkStore): every root is the
//     home directory ("~/...") or the directory an environment variable
//     names, every directory, pattern and settings file below it is a
//     relative path with no "..", no absolute path or volume, and a
//     store's provider is one the plugin serves (a store whose provider
//     another plugin won is not listed). A manifest that breaks one of
//     these is refused. The stores are read by package archive, read-only,
//     regular files only (symbolic links are not followed), and their bytes
//     reach only this plugin's sandbox and the user's own archive.
//
// It can:
//   - produce wrong but well-formed records: the host checks form, not
//     meaning (the assembler maps out-of-vocabulary values);
//   - burn CPU up to its time limit on every call, and memory up to the
//     limit on every instance;
//   - declare a store anywhere in the user's home directory (or under a
//     variable's directory) and so have the files matching its pattern
//     archived into the user's storage as its sessions: a dropped-in
//     plugin is trusted to name its agent's store as the user is trusted
//     to choose the plugins they install (twasm doctor lists every store
//     and the plugin that declared it);
//   - read the clocks and random numbers (real ones: Go's garbage
//     collector needs a real clock, see RATIONALE.md; crypto/rand, seeding
//     the guest's map hashes, unless [Options].RandSource fixes it for a
//     test), and write to its
//     stderr, which ends up in fault messages and must be treated as
//     untrusted text;
//   - exploit a bug in wazero's compiler or runtime: the sandbox is only
//     as strong as wazero.
//
// A bundled plugin is built with the binary and trusted not to be
// hostile, not to be bug-free: it runs under every limit above, time
// included, instrumented by the build (internal/tools/bundlerecord), which the
// host recognises by its exported flag and does not redo.
//
// # On-disk caches
//
// Two caches live under os.UserCacheDir()/twasm (the default [Options].CacheDir), in
// the user's own cache directory: nothing in them is trusted more than
// the user's account, and an attacker who can write there can already
// write the plugin directory.
//
//   - The compilation cache (wazero/): machine code wazero compiled, keyed
//     by the sha256 of the module bytes compiled (after the host's
//     rewrites), wazero's version and the CPU. wazero loads it as native
//     code without validating it again: whoever can write it can run code
//     in twasm. It is trusted like the binary; its key means a changed
//     module is never served stale code. Unwritable, it is replaced by an
//     in-memory cache (slower starts, same results). An entry damaged on
//     disk is rejected where wazero can tell (a checksum of the code, the
//     lengths it reads: a flipped bit in the code, a file cut short or
//     not an entry; the function offsets before the code are not
//     covered): the compile fails on it, and the host then drops the
//     cache's compiled code (wazero does not say which entry; only whole
//     entries, named by their key) and compiles the module again, once,
//     with a warning, so that the plugin loads and is instrumented as
//     before rather than failing or running uninstrumented.
//   - The manifest cache (wazero/manifests/): per external plugin file,
//     keyed by crc32c and size, its manifest and sha256 after a load
//     (<key>.json), or the error of a failed load and its sha256
//     (<key>.failed.json). It routes providers only: a plugin that loads
//     later is checked in full (imports, exports, ABI version, its own
//     manifest), and a failure record is honoured only when the file's
//     sha256 matches it. Forged or stale, it can make twasm route a
//     provider to a file that then reports something else, or skip a
//     plugin until the file changes; it cannot make twasm run code the
//     checks refuse. Unreadable or malformed records are ignored, and a
//     load the caller cancelled is not recorded as a failure.
//
// What happens on each fault, for the call that faulted: the records
// reported before it are returned with a *normalize.FaultError (Plugin,
// Op, the cause, the captured stderr) wrapping one cause (timed out, out
// of memory, trapped: a wasm trap, an unrecovered Go panic, an exit; a
// fatal status, which the SDK returns for a recovered panic; a limit
// exceeded; a contract violation), which the stream reports in the step
// result's warnings, its lines counted as lost; the module is closed; a
// feed immediately gets a fresh module and the stream's Begin is replayed,
// so the next Feed works. StatusRejected is not a fault: the records and a
// *normalize.RejectedError come back and the module is kept. A call
// stopped by the caller's own context is not a fault either: the error
// wraps ctx.Err() and the next call starts a fresh module.
package host
