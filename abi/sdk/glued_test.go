package sdk

import (
	"reflect"
	"testing"
)

// TestGluedObjects: the objects of a line that holds several, braces and
// quotes inside strings (escaped ones too) left alone, and whether the
// line was nothing but objects and whitespace.
func TestGluedObjects(t *testing.T) {
	tests := []struct {
		name, in string
		objs     []string
		whole    bool
	}{
		{"one object", `{"a":1}`, []string{`{"a":1}`}, true},
		{"two glued", `{"a":1}{"b":{"c":2}}`, []string{`{"a":1}`, `{"b":{"c":2}}`}, true},
		{"spaces between", ` {"a":1}  {"b":2} `, []string{`{"a":1}`, `{"b":2}`}, true},
		{"braces and quotes in strings", `{"t":"}{\"x"}{"u":"\\"}`, []string{`{"t":"}{\"x"}`, `{"u":"\\"}`}, true},
		{"a record cut short, then a whole one", `{"a":"cut{"b":2}`, nil, false},
		{"a stray close brace", `}{"b":2}`, []string{`{"b":2}`}, false},
		{"text between", `{"a":1}x{"b":2}`, []string{`{"a":1}`, `{"b":2}`}, false},
		{"an array", `[1,2]`, nil, false},
		{"empty", ``, nil, false},
		{"unclosed", `{"a":1}{"b":`, []string{`{"a":1}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, whole := GluedObjects([]byte(tt.in))
			var got []string
			for _, o := range objs {
				got = append(got, string(o))
			}
			if !reflect.DeepEqual(got, tt.objs) || whole != tt.whole {
				t.Errorf("GluedObjects(%q) = %q, %v; want %q, %v", tt.in, got, whole, tt.objs, tt.whole)
			}
		})
	}
}
