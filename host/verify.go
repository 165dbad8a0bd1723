package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/tetratelabs/wazero/api"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/verify"
	"github.com/twasm/twasm/internal/wire"
)

// Verify checks a module against the contract without registering it:
// imports and exports with their signatures, the memory export, then (when
// those pass) instantiation with the sandbox's limits, the ABI version,
// the manifest, and an empty stream (begin, feed of an empty batch, end).
// It runs the module in the sandboxed runtime whatever its origin.
//
// Every problem is reported in the report (its type is internal: it
// serves `twasm plugins verify`); the error is for the check itself
// failing (a cancelled ctx, a closed Runtime).
func (rt *Runtime) Verify(ctx context.Context, wasm []byte) (*verify.Report, error) {
	sum := sha256.Sum256(wasm)
	r := &verify.Report{SHA256: hex.EncodeToString(sum[:]), Size: len(wasm)}
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("host: verify: runtime closed")
	}
	// Compiled as an external plugin runs: instrumented when it can be.
	wrt, compiled, err := rt.compile(ctx, wasm, Source{Path: "(verify)"})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("host: verify: %w", ctx.Err())
		}
		r.Problems = append(r.Problems, "it is not a valid WebAssembly module: "+err.Error())
		return r, nil
	}
	defer compiled.Close(ctx)
	for _, d := range compiled.ImportedFunctions() {
		module, name, _ := d.Import()
		f := verify.Func{Module: module, Name: name, Signature: formatSig(d.ParamTypes(), d.ResultTypes())}
		if p := checkImports([]api.FunctionDefinition{d}); len(p) > 0 {
			f.Problem = p[0]
		}
		r.Imports = append(r.Imports, f)
	}
	for name, d := range compiled.ExportedFunctions() {
		r.Exports = append(r.Exports, verify.Func{Name: name, Signature: formatSig(d.ParamTypes(), d.ResultTypes())})
	}
	sort.Slice(r.Exports, func(i, j int) bool { return r.Exports[i].Name < r.Exports[j].Name })
	if r.Problems = checkModule(compiled); len(r.Problems) > 0 {
		return r, nil
	}

	if wrt == rt.trusted {
		// The throwaway plugin's runtime below is not rt, so its
		// instance does not make rt's host modules: made here.
		if err := rt.trustedImports(ctx); err != nil {
			return nil, fmt.Errorf("host: verify: %w", err)
		}
	}
	p := newPlugin(rt, wrt, compiled, Source{Path: "(verify)"}, r.SHA256)
	// A throwaway plugin: its faults must not count anywhere.
	p.rt = &Runtime{s: rt.s}
	p.rt.s.maxFaults = -1
	p.rt.s.poolSize = 1
	defer p.close(ctx)
	m, err := p.instantiate(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("host: verify: %w", ctx.Err())
		}
		r.Problems = append(r.Problems, fmt.Sprintf("instantiation failed: %v%s", err, stderrSuffix(m)))
		return r, nil
	}
	manifest, _, err := m.handshake(ctx, nil)
	if v := m.abiVersion; v != 0 {
		r.ABIVersion = fmt.Sprintf("%d.%d", v>>16, v&0xffff)
	}
	m.close(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("host: verify: %w", ctx.Err())
		}
		r.Problems = append(r.Problems, problemsOf(err)...)
		return r, nil
	}
	r.Manifest = &manifest
	p.manifest = manifest

	// An empty stream: begin, a batch of no lines, end.
	in, err := p.newInstance(ctx)
	if err != nil {
		r.Problems = append(r.Problems, err.Error())
		return r, nil
	}
	defer in.Close(ctx)
	steps := []struct {
		op  string
		run func() error
	}{
		{"begin", func() error { return in.Begin(ctx, abi.BeginOptions{Provider: manifest.Providers[0]}) }},
		{"feed", func() error { _, err := in.Feed(ctx, wire.AppendBatchHeader(nil, 0)); return err }},
		{"end", func() error { _, err := in.End(ctx); return err }},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("host: verify: %w", ctx.Err())
			}
			r.Problems = append(r.Problems, fmt.Sprintf("an empty stream failed at %s: %v", s.op, err))
			break
		}
	}
	return r, nil
}

func problemsOf(err error) []string {
	if e, ok := err.(*abiError); ok {
		return e.Problems
	}
	return []string{err.Error()}
}

func stderrSuffix(m *module) string {
	if m == nil {
		return ""
	}
	if s := m.stderr.String(); s != "" {
		return "; stderr: " + s
	}
	return ""
}
