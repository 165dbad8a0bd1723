package transcript

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/twasm/twasm/internal/jsonstr"
)

// marshalValue appends v as JSON, following encoding/json's rules for the
// plain data types used in payloads (structs with json tags and omitempty,
// pointers, slices, string-keyed maps in sorted key order, numbers, bools,
// json.RawMessage and json.Marshaler values), except that strings are
// encoded with jsonstr.AppendQuoted: invalid UTF-8 survives as \udcXX
// escapes instead of becoming U+FFFD. Step results go through it so that a final
// answer keeps exactly the bytes its events keep.
func marshalValue(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, reflect.ValueOf(v), 0)
}

func appendValue(b []byte, v reflect.Value, depth int) ([]byte, error) {
	if depth > 100 {
		return b, fmt.Errorf("%w: value nested too deep", ErrInvalidEvent)
	}
	if !v.IsValid() {
		return append(b, "null"...), nil
	}
	if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
		if v.Len() == 0 {
			return append(b, "null"...), nil
		}
		return jsonstr.AppendCompactJSON(b, v.Bytes())
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return appendValue(b, v.Elem(), depth+1)
	case reflect.String:
		return jsonstr.AppendQuoted(b, v.String()), nil
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, fmt.Errorf("%w: unsupported float %v", ErrInvalidEvent, f)
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, v.Index(i), depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case reflect.Map:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		if v.Type().Key().Kind() != reflect.String {
			return b, fmt.Errorf("%w: map key type %s", ErrInvalidEvent, v.Type().Key())
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		b = append(b, '{')
		var err error
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.AppendQuoted(b, k.String())
			b = append(b, ':')
			if b, err = appendValue(b, v.MapIndex(k), depth+1); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case reflect.Struct:
		return appendStruct(b, v, depth)
	}
	return b, fmt.Errorf("%w: cannot encode %s", ErrInvalidEvent, v.Type())
}

func appendStruct(b []byte, v reflect.Value, depth int) ([]byte, error) {
	t := v.Type()
	b = append(b, '{')
	first := true
	var err error
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if strings.Contains(","+opts+",", ",omitempty,") && isEmpty(fv) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsonstr.AppendQuoted(b, name)
		b = append(b, ':')
		if b, err = appendValue(b, fv, depth+1); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// agentResult has AgentResult's fields without its methods, so that
// MarshalJSON can encode it without recursing.
type agentResult AgentResult

// MarshalJSON encodes r losslessly: its strings as the transcript's lines
// write them (invalid UTF-8 as \udcXX escapes, not U+FFFD).
func (r AgentResult) MarshalJSON() ([]byte, error) {
	return marshalValue(nil, agentResult(r))
}
