# twasm build. `make` builds bin/twasm with every bundled plugin embedded.
# Built .wasm files are build output (internal/bundled/wasm/, gitignored).

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/twasm/twasm/internal/cli/build.Version=$(VERSION)
BUNDLED   := internal/bundled/wasm
PLUGINS   := $(notdir $(patsubst %/wasm/,%,$(dir $(wildcard plugins/*/wasm/main.go))))
WASM      := $(PLUGINS:%=$(BUNDLED)/%.wasm)
MANIFESTS := $(BUNDLED)/manifests.json
# The same record as Go values of package bundled (bundlerecord -go): the
# host reads it without decoding JSON.
GENERATED := internal/bundled/manifests_gen.go
FUZZTIME  ?= 30s
BENCHTIME ?= 1x
BENCHCOUNT ?= 5
# Plugins are built with TinyGo (installed by .ci/install-tinygo into the
# user's cache, from the Go module proxy and Debian's packages): a fifth the
# size, several times faster to start and about twice as fast to run as
# standard Go's wasip1 build. `make WASM_TOOLCHAIN=go` builds them with Go
# itself; `make test` checks every plugin's golden cases with both.
#   -opt=2            optimize for speed (the default, -opt=z, for size)
#   -scheduler=none   no asyncify: the SDK starts no goroutine and never blocks
#   -no-debug         no DWARF: smaller modules, faster compilation-cache loads
#   -panic=trap       a panic traps without printing (TinyGo has no recover on
#                     wasm: the host discards the instance either way)
#   -tags=twasm.boundarygc  collect garbage only between calls, with no stack
#                     scan and so no shadow stack of pointers: about 1.7x faster
#                     plugins (.ci/install-tinygo patches the runtime; RATIONALE.md)
#   -interp-timeout=1h  TinyGo gives up evaluating package initializers at
#                     build time after 3 minutes of wall time by default, which
#                     a build on a heavily loaded machine reached (the abi
#                     package at a load of 90 on 2 cores): a bound on a hang,
#                     not on speed; the module is the same
WASM_TOOLCHAIN ?= tinygo
TINYGO       ?= $(shell .ci/install-tinygo --path)
TINYGO_FLAGS ?= -opt=2 -scheduler=none -no-debug -panic=trap -tags=twasm.boundarygc -interp-timeout=1h
# Tests and benchmarks that build plugins themselves (internal/tools/wasmbuild)
# use the same compiler and flags.
export WASM_TOOLCHAIN TINYGO TINYGO_FLAGS
# The other toolchain's modules, for `make golden`.
OTHER_TOOLCHAIN := $(if $(filter tinygo,$(WASM_TOOLCHAIN)),go,tinygo)
ALT_WASM  := $(PLUGINS:%=bin/wasm-$(OTHER_TOOLCHAIN)/%.wasm)
WASM_SRC  := $(shell find abi internal/wire plugins -name '*.go' -not -name '*_test.go' -not -path 'abi/sdk/sdktest/*' 2>/dev/null) go.mod
# A change of toolchain or flags rebuilds the modules.
TOOLCHAIN_STAMP := bin/wasm-toolchain
$(shell mkdir -p bin; echo '$(WASM_TOOLCHAIN) $(TINYGO_FLAGS)' | cmp -s - $(TOOLCHAIN_STAMP) || echo '$(WASM_TOOLCHAIN) $(TINYGO_FLAGS)' > $(TOOLCHAIN_STAMP))
# wasm-build TOOLCHAIN,OUT,PLUGIN: TinyGo (-target=wasip1 -buildmode=c-shared
# $(TINYGO_FLAGS)) or Go (GOOS=wasip1 GOARCH=wasm -trimpath
# -buildmode=c-shared), through internal/tools/wasmbuild, which also keeps a
# copy in the tests' build cache (~/.cache/twasm-test-wasm) under the key the
# tests' own build of the same sources would have: pluginbench and the
# tests that build a bundled plugin then reuse it instead of building it
# again (internal/tools/pluginbuild).
wasm-build = $(GO) run ./internal/tools/pluginbuild -toolchain $(1) -o $(2) ./plugins/$(3)/wasm
# TinyGo is installed (or found installed) before the first TinyGo build.
needs-tinygo = $(if $(filter tinygo,$(1)),tinygo)

.PHONY: all plugins tinygo otelcol test-tools test test-build test-busy test-go golden bench fuzz lint example install uninstall clean redact-rules

all: bin/twasm

plugins: $(WASM) $(MANIFESTS)

# Each module depends on the Go files it is built from, as .ci/wasm-deps
# finds them with go list (bin/wasm-deps.mk, made again when a Go file
# under abi, internal/wire or plugins changes, since an import may have):
# a change to one plugin rebuilds that plugin's modules, a change to the
# SDK every module.
WASM_DEPS := bin/wasm-deps.mk
$(WASM_DEPS): $(WASM_SRC) .ci/wasm-deps
	@mkdir -p bin
	@.ci/wasm-deps $(BUNDLED) 'bin/wasm-go bin/wasm-tinygo' $(PLUGINS) > $@.tmp && mv $@.tmp $@
include $(WASM_DEPS)

# bundlerecord rewrites each bundled module in place (wasmdata, wasminterrupt,
# both on wasmbin)
# (keeping the compiler's modification time, so that a plugin source edited
# while other modules built is still newer than its module and the next make
# builds it again) and leaves a module it finds rewritten alone: a change to either rewriter
# makes the modules again (from the build cache when their sources are
# unchanged), so no tree keeps modules the older rewriter made.
REWRITERS := $(shell find internal/wasm/wasmbin internal/wasm/wasmdata internal/wasm/wasminterrupt -name '*.go' -not -name '*_test.go' 2>/dev/null)
$(BUNDLED)/%.wasm: $(TOOLCHAIN_STAMP) $(REWRITERS) | $(call needs-tinygo,$(WASM_TOOLCHAIN))
	@mkdir -p $(BUNDLED)
	$(call wasm-build,$(WASM_TOOLCHAIN),$@,$*)

bin/wasm-$(OTHER_TOOLCHAIN)/%.wasm: $(TOOLCHAIN_STAMP) | $(call needs-tinygo,$(OTHER_TOOLCHAIN))
	@mkdir -p $(dir $@)
	$(call wasm-build,$(OTHER_TOOLCHAIN),$@,$*)

# The OpenTelemetry Collector the OTLP export tests send to (built from the
# Go module proxy once per machine into ~/.cache/twasm/otelcol-*; a no-op
# when built).
otelcol:
	@.ci/install-otelcol >/dev/null

# What the tests use beyond Go: where it cannot be installed here, the
# tests that need it skip and say why (CI installs it, and fails without).
# The first run builds the Collector (about 3 minutes on 2 idle cores);
# the script says so while it works.
test-tools:
	@.ci/install-otelcol >/dev/null || echo "make: the OpenTelemetry Collector could not be built: the OTLP export tests will be skipped" >&2

# Installs TinyGo when it is missing; a fast no-op otherwise.
tinygo:
	@.ci/install-tinygo >/dev/null

# The build records each bundled plugin's manifest and sha256 (by loading
# it through the host), so twasm maps providers without compiling plugins
# it does not use.
# The Go record of the last build is removed first: written from other
# types (abi changed), it would keep bundlerecord from compiling. The two
# files are one grouped target: either one missing (a tree built before
# the Go record existed) makes both again, so the binary never falls back
# to parsing the JSON record unnoticed.
$(MANIFESTS) $(GENERATED) &: $(WASM)
	rm -f $(GENERATED)
	$(GO) run ./internal/tools/bundlerecord -go $(GENERATED) $(BUNDLED)

bin/twasm: $(WASM) $(MANIFESTS) $(GENERATED) $(shell find . -name '*.go' -not -name '*_test.go' -not -path './plugins/*/wasm/*' 2>/dev/null) go.mod
	@mkdir -p bin
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./cmd/twasm

# The whole suite: unit, integration and process tests with the race
# detector, then every bundled plugin's golden cases through the real wasm
# path of the built binary. The plugins of both toolchains are built
# first, as many at once as there are cores (JOBS): a TinyGo build has
# one thread running most of the time (LLVM's whole-module optimization,
# wasm-opt), so one build at a time leaves the other cores idle on a
# fresh clone.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: test-tools
	@$(MAKE) --no-print-directory -j$(JOBS) test-build
	$(GO) test -race -timeout 30m ./...
	$(MAKE) --no-print-directory golden

test-build: bin/twasm $(ALT_WASM)
	@:

# The suite (or PKGS) with -race while BURNERS CPU-bound processes compete
# for the cores (default 20: a load like the one that made tests racing a
# time limit fail in CI), RUNS times, each test COUNT times, only tests
# matching RUN if given. Finds a test that depends on the machine's speed.
test-busy: bin/twasm test-tools
	BURNERS='$(or $(BURNERS),20)' RUNS='$(or $(RUNS),1)' COUNT='$(or $(COUNT),1)' RUN='$(RUN)' PKGS='$(or $(PKGS),./...)' .ci/test-busy

# Every plugin's golden cases, through the bundled modules and through the
# same plugins built with the other toolchain (loaded as external plugins):
# the SDK and the plugins must behave the same under both.
golden: bin/twasm $(ALT_WASM)
	@for p in $(PLUGINS); do \
	  if [ -d testdata/golden/$$p ]; then \
	    printf '%s (%s, bundled): ' $$p $(WASM_TOOLCHAIN); bin/twasm golden check --plugin $$p testdata/golden/$$p || exit 1; \
	    printf '%s (%s): ' $$p $(OTHER_TOOLCHAIN); bin/twasm golden check --plugin bin/wasm-$(OTHER_TOOLCHAIN)/$$p.wasm testdata/golden/$$p || exit 1; \
	  fi; \
	done

# Benchmarks run in one process per package, so every ratio in
# BENCHMARKS.md compares figures measured in the same run on the same
# machine; benchreport then times the binary itself (start-up, RSS of a
# BENCH_RSS_BYTES input, default 128 MiB). About 15 minutes on 2 idle cores.
bench: RECORDER_BENCHTIME ?= 200000x
bench: PLUGIN_BENCHTIME ?= 2x
bench: HOST_BENCHTIME ?= 20x
bench: MEMORY_LINES ?= 1000000
bench: MEMORY_STREAMS ?= 10000
# The archive benchmarks: an archive of real transcripts (testdata inputs
# recorded, then copied with fresh run ids up to INDEX_BYTES) indexed and
# searched (internal/index), a store of SYNC_SESSIONS Claude sessions
# synced again unchanged and a home of HOME_SESSIONS sessions of several
# agents made from the real captures synced by bin/twasm for the first
# time against jq -c . over them (internal/archive), twasm usage by day over
# SYNC_SESSIONS sessions from the index and from the files
# (internal/cli/usagecmd), twasm serve's sessions and search pages over
# the same SYNC_SESSIONS sessions and a run of 20,000 events opened in
# Chromium (internal/web; the browser's figure is not measured without
# one), and the size of a storage against the logs
# it archives (internal/archive BenchmarkStoreSize: the real captures of
# four agents synced and indexed); generated in temporary directories
# and deleted. A few minutes on 2 idle cores.
bench: INDEX_BYTES ?= 1073741824
bench: SYNC_SESSIONS ?= 10000
bench: HOME_SESSIONS ?= 2000
bench: bin/twasm
	@sync # write back the build's dirty pages before anything is timed
	@{ echo "loadavg before the benchmarks: $$(cat /proc/loadavg 2>/dev/null)"; \
	  $(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) -benchtime $(RECORDER_BENCHTIME) ./recorder/; \
	  $(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) -benchtime $(HOST_BENCHTIME) ./host/; \
	  $(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) -benchtime $(PLUGIN_BENCHTIME) -timeout 90m ./internal/tools/pluginbench/; \
	  TWASM_MEMORY_LINES=$(MEMORY_LINES) TWASM_MEMORY_STREAMS=$(MEMORY_STREAMS) $(GO) test -run '^TestPluginMemoryFlat$$' -count 1 -v -timeout 90m ./internal/tools/pluginbench/ \
	    | grep -E 'memory-flat|grew|^(--- |ok|FAIL|PASS|panic)'; \
	  TWASM_BENCH_ARCHIVE_BYTES=$(INDEX_BYTES) TWASM_BENCH_SESSIONS=$(SYNC_SESSIONS) TWASM_BENCH_HOME_SESSIONS=$(HOME_SESSIONS) $(GO) test -run '^$$' -bench . -benchmem -count 1 -benchtime 1x -timeout 90m ./internal/index/ ./internal/archive/; \
	  TWASM_BENCH_SESSIONS=$(SYNC_SESSIONS) $(GO) test -run '^$$' -bench Usage -count 1 -benchtime 5x -timeout 30m ./internal/cli/usagecmd/; \
	  TWASM_BENCH_SESSIONS=$(SYNC_SESSIONS) $(GO) test -run '^$$' -bench Serve -count 1 -benchtime 1x -timeout 30m ./internal/web/; \
	  echo "loadavg after the benchmarks: $$(cat /proc/loadavg 2>/dev/null)"; } 2>&1 | tee bench.out
	$(GO) run ./internal/tools/benchreport -in bench.out -out BENCHMARKS.md -twasm bin/twasm \
	  -method "go test -bench . -benchmem -count $(BENCHCOUNT); ./recorder -benchtime $(RECORDER_BENCHTIME), ./host -benchtime $(HOST_BENCHTIME), ./internal/tools/pluginbench -benchtime $(PLUGIN_BENCHTIME) (a pluginbench sample is that many passes over a 16 MiB corpus, after go test's uncounted one-pass run); TestPluginMemoryFlat with $(MEMORY_LINES) lines and $(MEMORY_STREAMS) streams per plugin; ./internal/index and ./internal/archive -benchtime 1x -count 1 on a $(INDEX_BYTES)-byte archive, $(SYNC_SESSIONS) sessions and a home of $(HOME_SESSIONS); ./internal/cli/usagecmd -benchtime 5x over $(SYNC_SESSIONS) sessions; ./internal/web -bench Serve -benchtime 1x over $(SYNC_SESSIONS) sessions"

fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# lint vets the plugins and the SDK also as they are built to wasm
# (abi/sdk/sdktest, which runs the host around a plugin, is native only).
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1; }
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet $$($(GO) list ./abi/... ./plugins/... | grep -v /abi/sdk/sdktest)
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

# Installs bin/twasm into BINDIR: /usr/local/bin for root, else
# ~/.local/bin (on the PATH of a Debian or Ubuntu login once it exists);
# says so when BINDIR is not on the PATH.
BINDIR ?= $(if $(filter 0,$(shell id -u)),/usr/local/bin,$(HOME)/.local/bin)
install: bin/twasm
	@mkdir -p '$(BINDIR)'
	install -m 0755 bin/twasm '$(BINDIR)/twasm'
	@case ":$$PATH:" in *":$(BINDIR):"*) echo "twasm installed: $(BINDIR)/twasm";; \
	  *) echo "twasm installed: $(BINDIR)/twasm; $(BINDIR) is not on your PATH: add it (export PATH=\"$(BINDIR):\$$PATH\") or run make install BINDIR=<a directory on it>";; esac

uninstall:
	rm -f '$(BINDIR)/twasm'

# Regenerates internal/redact/gitleaks_rules.go from gitleaks' default rule
# set, at the version internal/tools/genredact/go.mod names (its own module:
# twasm does not link gitleaks).
redact-rules:
	cd internal/tools/genredact && $(GO) run . -o ../../redact/gitleaks_rules.go

# The README's first command: record a bundled example and show it.
example: bin/twasm
	@rm -rf $(CURDIR)/storage-example
	bin/twasm --storage storage-example record --provider claude --input examples/claude/stream-json.jsonl --prompt "Write hello.py and run it"
	bin/twasm --storage storage-example tree latest
	bin/twasm --storage storage-example view latest

clean:
	rm -rf bin $(BUNDLED)/*.wasm $(MANIFESTS) $(GENERATED) bench.out storage-example
