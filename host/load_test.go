package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/twasm/twasm/internal/wire"
)

// wasm assembles a tiny module: every function returns 0 (or nothing).
type wfn struct {
	name            string
	params, results int // number of i32s
	ret             int32
	trap            bool // the body is unreachable
}

type wimport struct {
	module, name    string
	params, results int
}

func uleb(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func sleb(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func wname(b []byte, s string) []byte { return append(uleb(b, uint32(len(s))), s...) }

func section(b []byte, id byte, body []byte) []byte {
	return append(uleb(append(b, id), uint32(len(body))), body...)
}

func wasmModule(imports []wimport, exports []wfn, memory bool) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	var types []byte
	ntypes := 0
	addType := func(p, r int) int {
		types = append(types, 0x60)
		types = uleb(types, uint32(p))
		for i := 0; i < p; i++ {
			types = append(types, 0x7f)
		}
		types = uleb(types, uint32(r))
		for i := 0; i < r; i++ {
			types = append(types, 0x7f)
		}
		ntypes++
		return ntypes - 1
	}
	var imp, fns, exp, code []byte
	for _, im := range imports {
		t := addType(im.params, im.results)
		imp = wname(imp, im.module)
		imp = wname(imp, im.name)
		imp = uleb(append(imp, 0), uint32(t))
	}
	for i, f := range exports {
		t := addType(f.params, f.results)
		fns = uleb(fns, uint32(t))
		exp = wname(exp, f.name)
		exp = uleb(append(exp, 0), uint32(len(imports)+i))
		body := []byte{0}
		if f.trap {
			body = append(body, 0x00)
		}
		if f.results == 1 {
			body = sleb(append(body, 0x41), f.ret)
		}
		body = append(body, 0x0b)
		code = append(uleb(code, uint32(len(body))), body...)
	}
	nexp := len(exports)
	if memory {
		exp = append(wname(exp, "memory"), 2, 0)
		nexp++
	}
	b = section(b, 1, append(uleb(nil, uint32(ntypes)), types...))
	if len(imports) > 0 {
		b = section(b, 2, append(uleb(nil, uint32(len(imports))), imp...))
	}
	b = section(b, 3, append(uleb(nil, uint32(len(exports))), fns...))
	if memory {
		b = section(b, 5, []byte{1, 0, 1})
	}
	b = section(b, 7, append(uleb(nil, uint32(nexp)), exp...))
	b = section(b, 10, append(uleb(nil, uint32(len(exports))), code...))
	return b
}

// goodExports are the exports the contract requires.
func goodExports() []wfn {
	return []wfn{
		{name: wire.ExportInitialize}, {name: wire.ExportMarker}, {name: wire.ExportVersion, results: 1, ret: wire.Major << 16},
		{name: wire.ExportBuffer, params: 1, results: 1}, {name: wire.ExportManifest, results: 1}, {name: wire.ExportBegin, params: 1, results: 1},
		{name: wire.ExportFeed, params: 1, results: 1}, {name: wire.ExportEnd, results: 1},
	}
}

func replace(fns []wfn, name string, with ...wfn) []wfn {
	var out []wfn
	for _, f := range fns {
		if f.name == name {
			out = append(out, with...)
			continue
		}
		out = append(out, f)
	}
	return out
}

func TestLoadRefusesModulesOffContract(t *testing.T) {
	rt := newRuntime(t, testOptions())
	ctx := context.Background()
	cases := []struct {
		name string
		wasm func() []byte
		want []string
	}{
		{"abiv2 plugin", func() []byte { return plugin(t, "abiv2") },
			[]string{"built for ABI major version 2 (version 2.0); this host speaks 1"}},
		{"twasm_v2 import", func() []byte { return plugin(t, "importv2") },
			[]string{"built for ABI major version 2 (it imports twasm_v2.output); this host speaks 1"}},
		{"file system", func() []byte { return plugin(t, "fsread") },
			[]string{"path_open", "reaches the file system"}},
		{"missing host function", func() []byte { return plugin(t, "nohostfn") },
			[]string{"imports twasm_v1.nonexistent, which this host does not provide"}},
		// Crafted files the decoder would reserve memory for
		// (wasmcheck's tests): refused before wazero reads them.
		{"crafted element segment", func() []byte {
			return []byte("\x00asm\x01\x00\x00\x00\t\x1d\x01\ac\x00\x93\x93\x93\xe8\x03\x00\x00\x00\t0000000000000000")
		}, []string{"module refused before decoding: reference type 0x63 (at byte 12)"}},
		{"crafted tables", func() []byte {
			return []byte("\x00asm\x01\x00\x00\x00\x04\x0d\x02\x70\x00\x80\x80\x80\x40\x70\x00\x80\x80\x80\x40")
		}, []string{"module refused before decoding: tables of more than 10000000 elements in all"}},
		// Function 0 calls function 1, whose type index is out of range:
		// wazero's validator panicked on it, ending the process.
		{"crafted type index", func() []byte { return typeIndexPanic },
			[]string{"module refused before decoding: a function of type index 5, out of range (1 types) (at byte 18)"}},
		{"not wasm", func() []byte { return []byte("#!/bin/sh\necho hi\n") },
			[]string{"not a valid WebAssembly module"}},
		{"empty module", func() []byte { return wasmModule(nil, nil, false) },
			[]string{"does not export twasm_abi_v1", "does not export _initialize", "does not export twasm_feed, which should be (i32) -> i32", `does not export its memory as "memory"`}},
		{"wrong signature", func() []byte {
			return wasmModule(nil, replace(goodExports(), wire.ExportFeed, wfn{name: wire.ExportFeed, results: 1}), true)
		}, []string{"twasm_feed should be (i32) -> i32, not () -> i32"}},
		{"command module", func() []byte {
			return wasmModule(nil, replace(goodExports(), wire.ExportInitialize, wfn{name: "_start"}), true)
		}, []string{"it exports _start: it is a command, not a reactor"}},
		{"other marker", func() []byte {
			return wasmModule(nil, replace(goodExports(), wire.ExportMarker, wfn{name: "twasm_abi_v3"}), true)
		}, []string{"built for ABI major version 3 (it exports twasm_abi_v3)"}},
		{"imports", func() []byte {
			return wasmModule([]wimport{
				{"env", "foo", 0, 0},
				{wire.HostModule, wire.ImportOutput, 1, 0},
				{wire.WASIModule, "sock_accept", 3, 1},
				{wire.WASIModule, "proc_raise", 1, 1},
				{"twasm_vx", "y", 0, 0},
			}, goodExports(), true)
		}, []string{
			`env.foo from module "env", which this host does not provide`,
			"twasm_v1.output as (i32) -> (); it should be (i32, i32) -> ()",
			"sock_accept: it reaches the network",
			"proc_raise, which a plugin may not use",
			`twasm_vx.y from module "twasm_vx"`,
		}},
		{"no manifest", func() []byte { return wasmModule(nil, goodExports(), true) },
			[]string{"manifest is not valid JSON"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := rt.Load(ctx, c.wasm(), Source{Path: "x.wasm"})
			var ae *abiError
			if !errors.As(err, &ae) {
				t.Fatalf("want an abiError, got %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if !strings.HasPrefix(err.Error(), "host: x.wasm is not a usable twasm plugin: ") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

// store is a manifest of providers a and b declaring one store.
func store(fields string) string {
	return `{"name":"a","version":"1","providers":["a","b"],"stores":[{` + fields + `}]}`
}

func TestParseManifest(t *testing.T) {
	cases := []struct {
		in, err string
	}{
		{`{"name":"a","version":"1","providers":["a","b"]}`, ""},
		{`{"name":"a","version":"1","providers":["a"],"future":1}`, ""},
		{`{"name":"","version":"1","providers":["a"]}`, `name "" is empty`},
		{`{"name":"a","version":" ","providers":["a"]}`, "version is empty"},
		{`{"name":"a","version":"1","providers":[]}`, "lists no provider"},
		{`{"name":"a","version":"1","providers":["a","a"]}`, `"a" is listed twice`},
		{`{"name":"a","version":"1","providers":["a\u0000"]}`, "not printable"},
		{`{"name":"a","version":"1","providers":["a"]} {}`, "data after"},
		{`[`, "not valid JSON"},
		{`{"name":"a","version":"1","providers":["a"],"keys":["type","id"]}`, ""},
		{`{"name":"a","version":"1","providers":["a"],"keys":[` + strings.Repeat(`"k",`, wire.MaxKeys) + `"k"]}`, "declares 256 keys"},
		// Declared stores (ABI 1.4) are untrusted: paths stay under the
		// home directory or an environment variable's directory.
		{store(`"name":"s","roots":[{"env":"A_HOME"},{"env":"XDG_DATA_HOME","path":"a/b"},{"path":"~/.a","os":"darwin"},{"path":"~"}],"dir":"x/y","pattern":"**/*.{json,jsonl}","retention_days":30,"retention_file":"s.json","retention_key":"k"`), ""},
		{store(`"name":"s","provider":"b","kind":"sqlite-of-the-future","roots":[{"path":"~/.a"}],"pattern":"*"`), ""},
		{store(`"name":"s","provider":"c","roots":[{"path":"~/.a"}],"pattern":"*"`), `provider "c" is not one of the plugin's`},
		{store(`"name":"","roots":[{"path":"~/.a"}],"pattern":"*"`), "name is empty"},
		{store(`"name":"s","roots":[],"pattern":"*"`), "lists no root"},
		{store(`"name":"s","roots":[{"path":"/etc"}],"pattern":"*"`), `root path "/etc" is neither`},
		{store(`"name":"s","roots":[{"path":".a"}],"pattern":"*"`), `root path ".a" is neither`},
		{store(`"name":"s","roots":[{"path":"~/../x"}],"pattern":"*"`), `root path "~/../x" is neither`},
		{store(`"name":"s","roots":[{"env":"A","path":"../x"}],"pattern":"*"`), `root path "../x" under $A`},
		{store(`"name":"s","roots":[{"env":"A","path":"/x"}],"pattern":"*"`), `root path "/x" under $A`},
		{store(`"name":"s","roots":[{"env":"A-B"}],"pattern":"*"`), `root env "A-B" is not a variable name`},
		{store(`"name":"s","roots":[{"env":"A","os":"li nux"}],"pattern":"*"`), `root os "li nux"`},
		{store(`"name":"s","roots":[{"env":"A"}],"unless_env":"$B","pattern":"*"`), `unless_env "$B"`},
		{store(`"name":"s","roots":[{"env":"A"}],"dir":"a/../../b","pattern":"*"`), `dir "a/../../b"`},
		{store(`"name":"s","roots":[{"env":"A"}],"dir":"C:\\x","pattern":"*"`), `dir "C:\\x"`},
		{store(`"name":"s","roots":[{"env":"A"}],"pattern":""`), `pattern "" is empty`},
		{store(`"name":"s","roots":[{"env":"A"}],"pattern":"../*"`), `pattern "../*"`},
		{store(`"name":"s","roots":[{"env":"A"}],"pattern":"/etc/*"`), `pattern "/etc/*"`},
		{store(`"name":"s","roots":[{"env":"A"}],"pattern":"*","retention_days":-1`), "retention_days is negative"},
		{store(`"name":"s","roots":[{"env":"A"}],"pattern":"*","retention_file":"../settings.json"`), `retention_file "../settings.json"`},
		// A SQLite store's queries (ABI 1.4) are one read-only SELECT each.
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT id AS key, t AS cursor FROM s","tables":[{"table":"p","key":"id","version":"t","json":["data"],"query":"SELECT * FROM p WHERE sid = :session AND t >= :since"}]}`), ""},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db"`), "declares no sqlite queries"},
		{store(`"name":"s","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1 AS key, 1 AS cursor","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}]}`), `sqlite queries on a store of kind ""`},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1; ATTACH 'x' AS y","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}]}`), "sessions query: not one read-only SELECT"},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[{"table":"p","key":"id","version":"t","query":"PRAGMA writable_schema=1"}]}`), "row query 1: not one read-only SELECT"},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[{"table":"p","query":"SELECT 1"}]}`), "row query 1 needs table, key and version"},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[]}`), "declares 0 row queries"},
		// Schemas (ABI 1.15): a read-only SELECT each, 1 to 16 table names.
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","schemas":[{"tables":["a","b"],"sessions":"SELECT 1 AS key, 1 AS cursor FROM a, b"}],"tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}]}`), ""},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","schemas":[{"tables":["a"],"sessions":"DROP TABLE a"}],"tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}]}`), "schema 1: sessions query: not one read-only SELECT"},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","schemas":[{"tables":[],"sessions":"SELECT 1"}],"tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}]}`), "schema 1 names 0 tables"},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","schemas":[{"tables":[" a"],"sessions":"SELECT 1"}],"tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}]}`), `schema 1: table " a" is no name`},
		// Related databases (ABI 1.7): a read-only SELECT each, a glob
		// that climbs at most two directories, a file beside each.
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}],"related":[{"table":"w","glob":"../w/*/s.db","query":"SELECT 1 AS k","key":"k","file":"w.json"}]}`), ""},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}],"related":[{"table":"w","glob":"../../../s.db","query":"SELECT 1 AS k","key":"k"}]}`), `related glob "../../../s.db"`},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}],"related":[{"table":"w","glob":"/etc/s.db","query":"SELECT 1 AS k","key":"k"}]}`), `related glob "/etc/s.db"`},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}],"related":[{"table":"w","glob":"s.db","query":"ATTACH 'x' AS y","key":"k"}]}`), "related query 1: not one read-only SELECT"},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}],"related":[{"table":"w","glob":"s.db","query":"SELECT 1 AS k"}]}`), "related query 1 needs table and key"},
		{store(`"name":"s","kind":"sqlite","roots":[{"path":"~/.a"}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}],"related":[{"table":"w","glob":"s.db","query":"SELECT 1 AS k","key":"k","file":"../w.json"}]}`), `related file "../w.json"`},
		// A folder store (ABI 1.4) lists the files of a session folder,
		// relative paths that stay in it.
		{store(`"name":"s","kind":"folder","roots":[{"env":"A"}],"pattern":"*","files":["api_conversation_history.json","events/*.jsonl"]`), ""},
		{store(`"name":"s","kind":"folder","roots":[{"env":"A"}],"pattern":"*"`), "a folder store lists no files"},
		{store(`"name":"s","kind":"folder","roots":[{"env":"A"}],"pattern":"*","files":["../x.json"]`), `files glob "../x.json"`},
		{store(`"name":"s","kind":"folder","roots":[{"env":"A"}],"pattern":"*","files":["/etc/passwd"]`), `files glob "/etc/passwd"`},
		{store(`"name":"s","kind":"folder","roots":[{"env":"A"}],"pattern":"*","files":[""]`), `files glob ""`},
		// A sections store (ABI 1.6) splits on a one-line prefix; a
		// projects root names nothing else and never walks a tree.
		{store(`"name":"s","kind":"sections","roots":[{"projects":true},{"path":"~/x"}],"pattern":".aider.chat.history.md","session_start":"# aider chat started at "`), ""},
		{store(`"name":"s","kind":"sections","roots":[{"projects":true}],"pattern":"h.md"`), "session_start \"\" is empty"},
		{store(`"name":"s","kind":"sections","roots":[{"projects":true}],"pattern":"h.md","session_start":"a\nb"`), "holds a line end"},
		{store(`"name":"s","roots":[{"path":"~/x"}],"pattern":"h.md","session_start":"# "`), `session_start on a store of kind ""`},
		{store(`"name":"s","kind":"sections","roots":[{"projects":true,"path":"~/x"}],"pattern":"h.md","session_start":"# "`), "a projects root names no env and no path"},
		{store(`"name":"s","kind":"sections","roots":[{"projects":true}],"pattern":"**/h.md","session_start":"# "`), "crosses directories"},
		// A list root (ABI 1.7) names a file in its directory and the
		// member of each entry that is a directory.
		{store(`"name":"s","kind":"sqlite","roots":[{"env":"A","list":{"file":"projects.json","array":"projects","field":"data_dir"}},{"path":"~/.a","list":{"file":"p.json","field":"d"}}],"pattern":"a.db","sqlite":{"sessions":"SELECT 1 AS key, 1 AS cursor","tables":[{"table":"p","key":"id","version":"t","query":"SELECT 1"}]}`), ""},
		{store(`"name":"s","roots":[{"path":"~/.a","list":{"file":"../p.json","field":"d"}}],"pattern":"a.db"`), `list file "../p.json"`},
		{store(`"name":"s","roots":[{"path":"~/.a","list":{"file":"/etc/p.json","field":"d"}}],"pattern":"a.db"`), `list file "/etc/p.json"`},
		{store(`"name":"s","roots":[{"path":"~/.a","list":{"file":"p.json"}}],"pattern":"a.db"`), `list field ""`},
		// ABI 1.8: the member naming each entry's project.
		{store(`"name":"s","roots":[{"path":"~/.a","list":{"file":"p.json","field":"d","project":"path"}}],"pattern":"a.db"`), ""},
		{store(`"name":"s","roots":[{"path":"~/.a","list":{"file":"p.json","field":"d","project":" path"}}],"pattern":"a.db"`), `list project field " path"`},
		{store(`"name":"s","roots":[{"path":"/etc","list":{"file":"p.json","field":"d"}}],"pattern":"a.db"`), `root path "/etc" is neither`},
		{store(`"name":"s","roots":[{"projects":true,"list":{"file":"p.json","field":"d"}}],"pattern":"a.db"`), "either projects or a list"},
		{`{"name":"a","version":"1","providers":["a"],"stores":[` + strings.Repeat(`{"name":"s","roots":[{"env":"A"}],"pattern":"*"},`, MaxStores) + `{"name":"s","roots":[{"env":"A"}],"pattern":"*"}]}`, "declares 65 stores"},
	}
	for _, c := range cases {
		_, err := parseManifest([]byte(c.in))
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.err)
		}
	}
}

func TestLoadFailsInInitialize(t *testing.T) {
	b := wasmModule(nil, replace(goodExports(), wire.ExportInitialize, wfn{name: wire.ExportInitialize, trap: true}), true)
	_, err := newRuntime(t, testOptions()).Load(context.Background(), b, Source{Path: "init.wasm"})
	if err == nil || !strings.Contains(err.Error(), "host: load init.wasm: plugin trapped: _initialize: ") || !strings.Contains(err.Error(), "wasm error: unreachable") || !errors.Is(err, errTrap) {
		t.Fatalf("got %v", err)
	}
}

func TestLoadRefusesBadStatusesAtHandshake(t *testing.T) {
	rt := newRuntime(t, testOptions())
	for _, c := range []struct {
		fns  []wfn
		want string
	}{
		{replace(goodExports(), wire.ExportManifest, wfn{name: wire.ExportManifest, results: 1, ret: 2}), "twasm_manifest returned status 2"},
		{replace(goodExports(), wire.ExportVersion, wfn{name: wire.ExportVersion, results: 1, trap: true}), "twasm_abi_version: wasm error: unreachable"},
		{replace(goodExports(), wire.ExportVersion, wfn{name: wire.ExportVersion, results: 1, ret: 2<<16 | 3}), "ABI major version 2 (version 2.3)"},
	} {
		_, err := rt.Load(context.Background(), wasmModule(nil, c.fns, true), Source{Path: "h.wasm"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// typeIndexPanic made wazero v1.12's validator panic (index out of
// range): one type, two functions, the second of type 5, and the first
// calls the second, whose type wazero looked up before it checked it.
var typeIndexPanic = []byte("\x00asm\x01\x00\x00\x00" +
	"\x01\x04\x01\x60\x00\x00" + // type section: () -> ()
	"\x03\x03\x02\x00\x05" + // function section: types 0 and 5
	"\x0a\x09\x02\x04\x00\x10\x01\x0b\x02\x00\x0b") // code: call 1; nothing

// TestCompileModuleRecovers: a panic of wazero's while it compiles a
// module is an error of the load, whatever reaches it past wasmcheck.
func TestCompileModuleRecovers(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	c, err := compileModule(ctx, r, typeIndexPanic)
	if err == nil || c != nil {
		t.Fatalf("compileModule = %v, %v; want an error", c, err)
	}
	t.Log(err)
}
