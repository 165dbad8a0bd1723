package wasminterrupt

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// env is imported by the modules of some cases: a function and two
// globals (i32 immutable, i64 mutable).
var env = wasmMod(
	sec(1, vec(fnType(nil, nil))),
	sec(3, vec(leb(0))),
	sec(6, vec(cat([]byte{i32, 0, 0x41, 0x01, 0x0b}), cat([]byte{i64, 1, 0x42, 0x02, 0x0b}))),
	sec(7, vec(exportFn("f", 0), cat(str("g0"), []byte{3}, leb(0)), cat(str("g1"), []byte{3}, leb(1)))),
	sec(10, vec(body(0x0b))),
)

type call struct {
	fn   string
	args []uint64
	want uint64
}

var instrumentCases = []struct {
	name  string
	in    []byte
	loops int    // checks inserted
	flag  uint32 // index of the new global
	env   bool   // instantiate env first
	calls []call
	// order of section ids in the output
	order []byte
}{
	{
		name: "loops, no global section, no imports", in: spinCount, loops: 2, flag: 0,
		calls: []call{{"count", []uint64{5}, 5}, {"count", []uint64{0}, 0}},
		order: []byte{1, 3, 5, 6, 7, 10},
	},
	{
		name: "imported and defined globals",
		in: wasmMod(
			sec(1, vec(fnType([]byte{i32}, []byte{i32}), fnType(nil, []byte{i32}), fnType(nil, nil))),
			sec(2, vec(
				cat(str("env"), str("g0"), []byte{3, i32, 0}),
				cat(str("env"), str("f"), []byte{0}, leb(2)),
				cat(str("env"), str("g1"), []byte{3, i64, 1}),
			)),
			sec(3, vec(leb(0), leb(1))),
			sec(5, vec([]byte{0, 0})),
			// Two globals: i32 mut initialised from the imported g0,
			// i64 const 0.
			sec(6, vec(cat([]byte{i32, 1, 0x23, 0x00, 0x0b}), cat([]byte{i64, 0, 0x42, 0x00, 0x0b}))),
			sec(7, vec(exportFn("count", 1), cat(str("mine"), []byte{3}, leb(2)), exportFn("get", 2))),
			sec(10, vec(
				withLocals(vec(cat(leb(1), []byte{i32})), countCode...),
				body(0x23, 0x02, 0x0b), // get: global.get 2
			)),
		),
		loops: 1, flag: 4, env: true,
		calls: []call{{"count", []uint64{3}, 3}, {"get", nil, 1}},
		order: []byte{1, 2, 3, 5, 6, 7, 10},
	},
	{
		name: "custom sections kept in place, global section created",
		in: wasmMod(
			custom("first", "\x03\x03"),
			sec(1, vec(fnType([]byte{i32}, []byte{i32}))),
			custom("b", "x"),
			sec(3, vec(leb(0))),
			sec(5, vec([]byte{0, 1})),
			custom("c", "y"),
			sec(7, vec(exportFn("count", 0))),
			sec(10, vec(withLocals(vec(cat(leb(1), []byte{i32})), countCode...))),
			custom("last", "\x00"),
		),
		loops: 1, flag: 0,
		calls: []call{{"count", []uint64{9}, 9}},
		order: []byte{0, 1, 0, 3, 5, 0, 6, 7, 10, 0},
	},
	{
		name: "no export section",
		in: wasmMod(
			sec(1, vec(fnType(nil, nil))),
			sec(3, vec(leb(0))),
			sec(5, vec([]byte{0, 0})),
			sec(10, vec(body(0x03, 0x40, 0x0b, 0x0b))),
			sec(11, vec()),
		),
		loops: 1, flag: 0,
		order: []byte{1, 3, 5, 6, 7, 10, 11},
	},
	{
		name: "multi-value loop parameters",
		in: wasmMod(
			sec(1, vec(fnType([]byte{i32, i32}, []byte{i32}))),
			sec(3, vec(leb(0))),
			sec(5, vec([]byte{0, 0})),
			sec(7, vec(exportFn("add", 0))),
			// local.get 0 local.get 1 loop (type 0) i32.add end end
			sec(10, vec(body(0x20, 0x00, 0x20, 0x01, 0x03, 0x00, 0x6a, 0x0b, 0x0b))),
		),
		loops: 1, flag: 0,
		calls: []call{{"add", []uint64{2, 3}, 5}},
		order: []byte{1, 3, 5, 6, 7, 10},
	},
	{
		name: "br_table in a loop with a result",
		in: wasmMod(
			sec(1, vec(fnType([]byte{i32}, []byte{i32}))),
			sec(3, vec(leb(0))),
			sec(5, vec([]byte{0, 0})),
			sec(7, vec(exportFn("sel", 0))),
			sec(10, vec(body(
				0x03, i32, // loop (result i32)
				0x41, 0x03, 0x1a, // i32.const 3 drop
				0x02, 0x40, 0x02, 0x40, 0x02, 0x40,
				0x20, 0x00, 0x0e, 0x02, 0x00, 0x01, 0x02, // br_table [0 1] 2
				0x0b, 0x41, 0x0a, 0x0f,
				0x0b, 0x41, 0x0b, 0x0f,
				0x0b, 0x41, 0x0c,
				0x0b, 0x0b,
			))),
		),
		loops: 1, flag: 0,
		calls: []call{{"sel", []uint64{0}, 10}, {"sel", []uint64{1}, 11}, {"sel", []uint64{7}, 12}},
		order: []byte{1, 3, 5, 6, 7, 10},
	},
	{
		name: "immediates holding the loop opcode",
		in: wasmMod(
			sec(1, vec(fnType(nil, []byte{i32}))),
			sec(3, vec(leb(0))),
			sec(5, vec([]byte{0, 1})),
			sec(7, vec(exportFn("f", 0))),
			sec(10, vec(withLocals(vec(cat(leb(3), []byte{i32})),
				0x41, 0x03, 0xc0, 0x1a, // i32.const 3 i32.extend8_s drop
				0x42, 0x83, 0x03, 0x1a, // i64.const 387 drop
				0x43, 0x03, 0x03, 0x03, 0x03, 0x1a, // f32.const
				0x44, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, // f64.const
				0xfc, 0x03, 0x1a, // i32.trunc_sat_f64_u drop
				0x41, 0x00, 0x28, 0x02, 0x03, 0x1a, // i32.load align=2 offset=3 drop
				0x41, 0x00, 0x41, 0x03, 0x41, 0x03, 0xfc, 0x0b, 0x00, // memory.fill
				0x3f, 0x00, 0x1a, // memory.size drop
				0xd0, 0x70, 0xd1, 0x1a, // ref.null func ref.is_null drop
				0x41, 0x03, 0x41, 0x03, 0x41, 0x01, 0x1c, 0x01, i32, 0x1a, // select (result i32)
				0x20, 0x02, 0x21, 0x02, // local.get 2 local.set 2
				0x41, 0x03, 0x0b,
			))),
		),
		loops: 0, flag: 0,
		calls: []call{{"f", nil, 3}},
		order: []byte{1, 3, 5, 6, 7, 10},
	},
	{
		name: "loop in unreachable code",
		in: wasmMod(
			sec(1, vec(fnType(nil, nil))),
			sec(3, vec(leb(0))),
			sec(5, vec([]byte{0, 0})),
			sec(10, vec(body(0x00, 0x03, 0x40, 0x0b, 0x03, 0x7e, 0x42, 0x03, 0x0b, 0x1a, 0x0b))),
		),
		loops: 2, flag: 0,
		order: []byte{1, 3, 5, 6, 7, 10},
	},
	{
		name: "a function that calls is checked at entry",
		in: wasmMod(
			sec(1, vec(fnType([]byte{i32}, []byte{i32}))),
			sec(3, vec(leb(0), leb(0))),
			sec(5, vec([]byte{0, 0})),
			sec(7, vec(exportFn("twice", 1))),
			sec(10, vec(
				body(0x20, 0x00, 0x41, 0x02, 0x6c, 0x0b), // double: n*2
				body(0x20, 0x00, 0x10, 0x00, 0x0b),       // twice: double(n)
			)),
		),
		loops: 1, flag: 0,
		calls: []call{{"twice", []uint64{21}, 42}},
		order: []byte{1, 3, 5, 6, 7, 10},
	},
}

func TestInstrument(t *testing.T) {
	ctx := context.Background()
	for _, c := range instrumentCases {
		t.Run(c.name, func(t *testing.T) {
			r := wazero.NewRuntime(ctx)
			defer r.Close(ctx)
			if err := compiles(t, r, c.in); err != nil {
				t.Fatalf("the input does not compile: %v", err)
			}
			in := bytes.Clone(c.in)
			out, err := Instrument(in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(in, c.in) {
				t.Fatal("the input was modified")
			}
			check := (&module{importedGlobals: c.flag}).check()
			if n := bytes.Count(out, check) - bytes.Count(c.in, check); n != c.loops {
				t.Errorf("%d checks inserted, want %d", n, c.loops)
			}
			secsIn, _ := splitSections(c.in)
			secsOut, err := splitSections(out)
			if err != nil {
				t.Fatal(err)
			}
			var order []byte
			for _, s := range secsOut {
				order = append(order, s.id)
			}
			if !bytes.Equal(order, c.order) {
				t.Errorf("sections % x, want % x", order, c.order)
			}
			// Sections other than global, export and code are copied;
			// type and function too, unless a bulk instruction needs
			// the charge function.
			charged := bytes.Contains(c.in, []byte{0xfc, 0x0b})
			rewritten := func(id byte) bool {
				return id == secGlobal || id == secExport || id == secCode || charged && (id == secType || id == secFunc)
			}
			var kept, copied [][]byte
			for _, s := range secsIn {
				if !rewritten(s.id) {
					kept = append(kept, s.body)
				}
			}
			for _, s := range secsOut {
				if !rewritten(s.id) {
					copied = append(copied, s.body)
				}
			}
			if !bytes.Equal(bytes.Join(kept, []byte{0xff}), bytes.Join(copied, []byte{0xff})) {
				t.Error("a passed-through section changed")
			}

			if c.env {
				if _, err := r.InstantiateWithConfig(ctx, env, wazero.NewModuleConfig().WithName("env")); err != nil {
					t.Fatal(err)
				}
			}
			mod, err := r.Instantiate(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			flag, ok := mod.ExportedGlobal(Export).(api.MutableGlobal)
			if !ok || flag.Type() != api.ValueTypeI32 || flag.Get() != 0 {
				t.Fatalf("exported %s: %v", Export, mod.ExportedGlobal(Export))
			}
			for _, cl := range c.calls {
				res, err := mod.ExportedFunction(cl.fn).Call(ctx, cl.args...)
				if err != nil || len(res) != 1 || res[0] != cl.want {
					t.Errorf("%s%v = %v, %v; want %d", cl.fn, cl.args, res, err, cl.want)
				}
			}
			if c.env {
				// The module's own mutable global is not the flag.
				flag.Set(1)
				if g := mod.ExportedGlobal("mine").Get(); g != 1 {
					t.Errorf("mine = %d, want 1 (initialised from env.g0)", g)
				}
				if _, err := mod.ExportedFunction("count").Call(ctx, 2*Fuel); err == nil {
					t.Error("count ran with the flag set")
				}
			}
		})
	}
}

func TestInstrumentRefuses(t *testing.T) {
	fn := func(code ...byte) []byte {
		return wasmMod(
			sec(1, vec(fnType(nil, nil))),
			sec(3, vec(leb(0))),
			sec(5, vec([]byte{0, 1})),
			sec(10, vec(body(code...))),
		)
	}
	cases := []struct {
		name   string
		in     []byte
		want   error
		reason string
	}{
		{"SIMD", fn(0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1a, 0x0b), ErrUnsupported, "opcode 0xfd"},
		{"threads", fn(0xfe, 0x03, 0x00, 0x0b), ErrUnsupported, "opcode 0xfe"},
		{"exceptions", fn(0x06, 0x40, 0x0b, 0x0b), ErrUnsupported, "opcode 0x6"},
		{"tail call", fn(0x12, 0x00, 0x0b), ErrUnsupported, "opcode 0x12"},
		{"unknown 0xfc", fn(0xfc, 0x12, 0x0b), ErrUnsupported, "0xfc 18"},
		{"multiple memories", fn(0x41, 0x00, 0x28, 0x42, 0x00, 0x00, 0x1a, 0x0b), ErrUnsupported, "multiple memories"},
		{"typed reference block", fn(0x02, 0x63, 0x70, 0x0b, 0x0b), ErrUnsupported, "block type"},
		{"typed reference local", wasmMod(sec(1, vec(fnType(nil, nil))), sec(3, vec(leb(0))),
			sec(10, vec(withLocals(vec(cat(leb(1), []byte{0x63, 0x70})), 0x0b)))), ErrUnsupported, "value type 0x63"},
		{"start function", wasmMod(sec(1, vec(fnType(nil, nil))), sec(3, vec(leb(0))), sec(8, leb(0)),
			sec(10, vec(body(0x0b)))), ErrUnsupported, "start function"},
		{"export taken", wasmMod(sec(6, vec([]byte{i32, 1, 0x41, 0, 0x0b})),
			sec(7, vec(cat(str(Export), []byte{3}, leb(0))))), ErrUnsupported, "already exports"},
		{"a loop and no memory", wasmMod(sec(1, vec(fnType(nil, nil))), sec(3, vec(leb(0))),
			sec(10, vec(body(0x03, 0x40, 0x0b, 0x0b)))), ErrUnsupported, "no memory"},
		{"tag section", wasmMod(sec(13, vec())), ErrUnsupported, "tag section"},
		{"shared memory", wasmMod(sec(2, vec(cat(str("env"), str("m"), []byte{2, 3, 1, 1})))), ErrUnsupported, "shared"},
		{"binary version 2", []byte("\x00asm\x02\x00\x00\x00"), ErrUnsupported, "version"},

		{"global.set of the flag's index", fn(0x41, 0x01, 0x24, 0x00, 0x0b), ErrMalformed, "global index 0 out of range"},
		{"initialiser reading the flag", wasmMod(sec(6, vec([]byte{i32, 0, 0x23, 0x01, 0x0b}))), ErrMalformed, "global index 1"},
		{"not wasm", []byte("\x7fELF\x02\x01\x01\x00"), ErrMalformed, "magic"},
		{"truncated body", fn(0x03, 0x40), ErrMalformed, "unexpected end"},
		{"bytes after the end", fn(0x0b, 0x01), ErrMalformed, "left at the end of the function body"},
		{"section out of order", wasmMod(sec(3, vec()), sec(1, vec())), ErrMalformed, "out of order"},
		{"repeated section", wasmMod(sec(1, vec()), sec(1, vec())), ErrMalformed, "out of order"},
		{"section past the end", append(wasmMod(), 1, 9, 0), ErrMalformed, "past the end"},
		{"u32 too long", fn(0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0b), ErrMalformed, "longer than 5"},
		{"u32 overflowing", fn(0x0c, 0x80, 0x80, 0x80, 0x80, 0x10, 0x0b), ErrMalformed, "overflows"},
		{"typed select of two", fn(0x41, 0, 0x41, 0, 0x41, 0, 0x1c, 0x02, i32, i32, 0x1a, 0x0b), ErrMalformed, "one type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Instrument(c.in)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.reason) || out != nil {
				t.Fatalf("got %v, %d bytes; want %v with %q", err, len(out), c.want, c.reason)
			}
			if e.Offset < 0 || e.Offset > len(c.in) {
				t.Errorf("offset %d outside the %d bytes", e.Offset, len(c.in))
			}
		})
	}
}

// The claim the package rests on: a host write to the flag, made while
// the module spins in a loop with no call and no other global access, is
// seen and stops it; clearing the flag lets the same instance run again.
func TestInterruptStopsTightLoop(t *testing.T) {
	ctx := context.Background()
	out, err := Instrument(spinCount)
	if err != nil {
		t.Fatal(err)
	}
	mod := instantiate(t, out)
	flag := mod.ExportedGlobal(Export).(api.MutableGlobal)

	// A collection stops the world, and waits for the guest to reach a
	// point where it can be stopped: the yields are such points.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	done := make(chan error, 1)
	set := make(chan struct{})
	start := time.Now()
	time.AfterFunc(50*time.Millisecond, func() { flag.Set(1); close(set) })
	go func() {
		_, err := mod.ExportedFunction("spin").Call(ctx)
		done <- err
	}()
	// Stopped by the flag, so not before it was set; how soon is not
	// asserted (no load on the machine may fail the test).
	if err := stops(t, "spin", done); err == nil || !strings.HasPrefix(err.Error(), "wasm error: unreachable") {
		t.Fatalf("spin ended with %v", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("spin stopped after %v, the flag was set after 50ms", d)
	}

	<-set
	flag.Set(0)
	if res, err := mod.ExportedFunction("count").Call(ctx, 1_000_000); err != nil || res[0] != 1_000_000 {
		t.Fatalf("count after clearing the flag: %v, %v", res, err)
	}
	flag.Set(1)
	if _, err := mod.ExportedFunction("count").Call(ctx, 2*Fuel); err == nil {
		t.Fatal("count ran with the flag set")
	}
}

// A call tree with no loop, exponential in time (2^60 calls), is stopped
// too: a function that calls is checked at its entry.
func TestInterruptStopsRecursion(t *testing.T) {
	ctx := context.Background()
	out, err := Instrument(wasmMod(
		sec(1, vec(fnType([]byte{i32}, nil))),
		sec(3, vec(leb(0))),
		sec(5, vec([]byte{0, 0})),
		sec(7, vec(exportFn("tree", 0))),
		// tree(n): if n { tree(n-1) tree(n-1) }
		sec(10, vec(body(0x20, 0x00, 0x04, 0x40,
			0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x00,
			0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x00,
			0x0b, 0x0b))),
	))
	if err != nil {
		t.Fatal(err)
	}
	mod := instantiate(t, out)
	if _, err := mod.ExportedFunction("tree").Call(ctx, 10); err != nil {
		t.Fatal(err)
	}
	flag := mod.ExportedGlobal(Export).(api.MutableGlobal)
	time.AfterFunc(50*time.Millisecond, func() { flag.Set(1) })
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("tree").Call(ctx, 60)
		done <- err
	}()
	if err := stops(t, "tree", done); err == nil || !strings.HasPrefix(err.Error(), "wasm error: unreachable") {
		t.Fatalf("tree ended with %v", err)
	}
}

// bulkLoop: fill (n i32) loops forever, each pass one memory.fill of n
// bytes at address 0 (the memory has 1024 pages, 64 MiB); count (n) does
// n fills of 1 byte and returns n.
var bulkLoop = wasmMod(
	sec(1, vec(fnType([]byte{i32}, nil), fnType([]byte{i32}, []byte{i32}))),
	sec(3, vec(leb(0), leb(1))),
	sec(5, vec(cat([]byte{0}, leb(1024)))),
	sec(7, vec(exportFn("fill", 0), exportFn("count", 1))),
	sec(10, vec(
		// loop: i32.const 0 i32.const 7 local.get 0 memory.fill br 0
		body(0x03, 0x40, 0x41, 0x00, 0x41, 0x07, 0x20, 0x00, 0xfc, 0x0b, 0x00, 0x0c, 0x00, 0x0b, 0x0b),
		// block loop (n == 0 ? leave; fill 1 byte; n--; again) end end; count
		withLocals(vec(cat(leb(1), []byte{i32})),
			0x02, 0x40, 0x03, 0x40,
			0x20, 0x00, 0x45, 0x0d, 0x01,
			0x41, 0x00, 0x41, 0x01, 0x41, 0x01, 0xfc, 0x0b, 0x00,
			0x20, 0x00, 0x41, 0x01, 0x6b, 0x21, 0x00,
			0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01,
			0x0c, 0x00, 0x0b, 0x0b,
			0x20, 0x01, 0x0b),
	)),
)

// A loop whose every pass is one memory.fill of 64 MiB passes a loop head
// check per pass only: without charging the fill by its size, the flag
// would be read after 65,536 fills (minutes). Charged, it is read after
// every fill or so. The operand stack is unchanged by the charge.
func TestInterruptStopsBulkMemory(t *testing.T) {
	ctx := context.Background()
	out, err := Instrument(bulkLoop)
	if err != nil {
		t.Fatal(err)
	}
	mod := instantiate(t, out)
	flag := mod.ExportedGlobal(Export).(api.MutableGlobal)
	if res, err := mod.ExportedFunction("count").Call(ctx, 3*Fuel); err != nil || res[0] != 3*Fuel {
		t.Fatalf("count: %v, %v", res, err)
	}
	if b, _ := mod.Memory().Read(0, 2); b[0] != 1 || b[1] != 0 {
		t.Fatalf("memory.fill wrote % x", b)
	}
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("fill").Call(ctx, 64<<20)
		done <- err
	}()
	// The flag is set once a 64 MiB fill has run (its last byte written):
	// the charge before the first fill reads the flag, so a flag set before
	// the guest got there stops it before any fill.
	filled := func() bool { b, _ := mod.Memory().ReadByte(64<<20 - 1); return b == 7 }
	for !filled() {
		select {
		case err := <-done:
			t.Fatalf("fill ended before a 64 MiB fill ran: %v", err)
		default:
			time.Sleep(time.Millisecond)
		}
	}
	flag.Set(1)
	if err := stops(t, "fill", done); err == nil || !strings.HasPrefix(err.Error(), "wasm error: unreachable") {
		t.Fatalf("fill ended with %v", err)
	}
}

// growLoop: grow () loops forever asking for 65,535 more pages (4 GiB),
// which fails (-1) every time, and for one page, which fails once the
// memory is at its maximum of 16 pages: a loop of memory.grow is stopped
// like any loop.
var growLoop = wasmMod(
	sec(1, vec(fnType(nil, nil))),
	sec(3, vec(leb(0))),
	sec(5, vec([]byte{1, 1, 16})),
	sec(7, vec(exportFn("grow", 0))),
	sec(10, vec(body(0x03, 0x40,
		0x41, 0xff, 0xff, 0x03, 0x40, 0x00, 0x1a, // i32.const 65535 memory.grow drop
		0x41, 0x01, 0x40, 0x00, 0x1a, // i32.const 1 memory.grow drop
		0x0c, 0x00, 0x0b, 0x0b))),
)

func TestInterruptStopsMemoryGrowLoop(t *testing.T) {
	out, err := Instrument(growLoop)
	if err != nil {
		t.Fatal(err)
	}
	mod := instantiate(t, out)
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("grow").Call(context.Background())
		done <- err
	}()
	// Set at once or later, the flag is first read after Fuel passes, by
	// when the memory is at its maximum.
	time.Sleep(50 * time.Millisecond)
	mod.ExportedGlobal(Export).(api.MutableGlobal).Set(1)
	if err := stops(t, "grow", done); err == nil || !strings.HasPrefix(err.Error(), "wasm error: unreachable") {
		t.Fatalf("grow ended with %v", err)
	}
	if n := mod.Memory().Size() / 65536; n != 16 {
		t.Errorf("memory of %d pages, want its maximum 16", n)
	}
}
