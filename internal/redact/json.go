package redact

import (
	"bytes"
	"fmt"

	"github.com/twasm/twasm/internal/jsonstr"
)

// maskValue re-encodes a JSON value with every string masked. Strings are
// decoded with jsonstr.AppendUnquoted and re-encoded with AppendQuoted,
// so nothing but the secrets changes meaning.
func maskValue(r *Redactor, raw []byte) ([]byte, error) {
	compact, err := jsonstr.AppendCompactJSON(nil, raw)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for i := 0; i < len(compact); {
		c := compact[i]
		if c != '"' {
			out.WriteByte(c)
			i++
			continue
		}
		end := jsonstr.StringEnd(compact, i)
		if end < 0 {
			return nil, fmt.Errorf("unterminated string")
		}
		s, err := jsonstr.Unquote(compact[i:end])
		if err != nil {
			return nil, err
		}
		out.Write(jsonstr.AppendQuoted(nil, r.MaskString(s)))
		i = end
	}
	return out.Bytes(), nil
}
