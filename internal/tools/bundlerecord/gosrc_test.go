package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/bundled"
)

// TestGoSource checks how each kind of value the record holds is written:
// a zero field left out, a slice that is empty but not nil kept so (JSON
// decoding gives one for "[]", and the two records must be equal), a
// pointer to a struct, text that needs escaping.
func TestGoSource(t *testing.T) {
	m := bundled.Manifests{
		"x.wasm": {SHA256: strings.Repeat("ab", 32), Size: 42, Manifest: abi.Manifest{
			Name: "x", Providers: []string{"x", "y"}, Formats: []string{},
			Description: "quotes \" and \\ and \n and <tags> and é",
			Stores: []abi.Store{{
				Name: "s", Roots: []abi.Root{}, Pattern: "*.jsonl",
				SQLite:       &abi.SQLiteSource{Sessions: "q", Tables: []abi.SQLiteTable{{Table: "t", JSON: []string{"a"}}}},
				SubAgentCall: &abi.SidecarKey{File: "{stem}.json", Key: "k"},
			}},
			SourceFacts: true,
		}},
	}
	src, err := goSource(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), bundled.GeneratedFile, src, 0); err != nil {
		t.Fatalf("does not parse: %v\n%s", err, src)
	}
	s := string(src)
	for _, want := range []string{
		`Formats:     []string{}`,
		`Roots:   []abi.Root{}`,
		`Providers:   []string{"x", "y"}`,
		`"quotes \" and \\ and \n and <tags> and é"`,
		`SQLite: &abi.SQLiteSource{`,
		`SubAgentCall: &abi.SidecarKey{`,
		`Size:   42,`,
		`SourceFacts: true,`,
		// The module itself, embedded for the host to read in place.
		"//go:embed \"wasm/x.wasm\"\nvar module0 string",
		"case \"x.wasm\":\n\t\treturn module0, true",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %s in\n%s", want, s)
		}
	}
	for _, absent := range []string{"Keys:", "Version:", "Files:", "RetentionDays:"} {
		if strings.Contains(s, absent) {
			t.Errorf("zero field written: %s in\n%s", absent, s)
		}
	}
}

// TestGoValueRefuses checks that a value the generated file could not
// hold is an error, not Go that fails to compile later.
func TestGoValueRefuses(t *testing.T) {
	for name, v := range map[string]any{
		"a function":             func() {},
		"a pointer to a string":  new(string),
		"another package's type": struct{ D time.Duration }{D: time.Second},
	} {
		if err := goValue(new(bytes.Buffer), reflect.ValueOf(v)); err == nil {
			t.Errorf("%s: written", name)
		}
	}
}
