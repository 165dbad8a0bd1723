// Package sqlguard checks that a query a plugin declares (ABI 1.4,
// abi.SQLiteSource) is one read-only SELECT before the host runs it on
// an agent's database. It is a lexical check, belt and braces: the host
// also runs the query on a read-only connection with query_only on, so a
// statement that slipped through still could not write.
//
// A query passes when it is one statement (a ";" only at its end), its
// first word is SELECT or WITH, and no word outside string literals and
// quoted names is one that writes, changes the connection or reaches
// outside the database: ATTACH, DETACH, PRAGMA, VACUUM, INSERT, UPDATE,
// DELETE, REPLACE INTO, CREATE, DROP, ALTER, REINDEX, ANALYZE, BEGIN,
// COMMIT, ROLLBACK, SAVEPOINT, RELEASE, LOAD_EXTENSION (and the file
// functions readfile, writefile, edit, fts3_tokenizer). Comments are
// skipped; an unterminated literal, quoted name or comment is refused.
package sqlguard

import (
	"errors"
	"fmt"
	"strings"
)

// MaxQueryBytes bounds a declared query.
const MaxQueryBytes = 64 << 10

// ErrNotReadOnly is wrapped by every refusal.
var ErrNotReadOnly = errors.New("not one read-only SELECT")

var forbidden = map[string]bool{
	"ATTACH": true, "DETACH": true, "PRAGMA": true, "VACUUM": true, "INSERT": true, "UPDATE": true,
	"DELETE": true, "CREATE": true, "DROP": true, "ALTER": true, "REINDEX": true, "ANALYZE": true,
	"BEGIN": true, "COMMIT": true, "ROLLBACK": true, "SAVEPOINT": true, "RELEASE": true, "END": false,
	"LOAD_EXTENSION": true, "READFILE": true, "WRITEFILE": true, "EDIT": true, "FTS3_TOKENIZER": true,
}

// Check returns nil when q is one read-only SELECT, else an error
// wrapping ErrNotReadOnly that says why.
func Check(q string) error {
	if len(q) > MaxQueryBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrNotReadOnly, len(q), MaxQueryBytes)
	}
	var words []string
	ended := false
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				i = len(q)
			} else {
				i += j + 1
			}
		case strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				return fmt.Errorf("%w: unterminated comment", ErrNotReadOnly)
			}
			i += 2 + j + 2
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			j := i + 1
			for {
				k := strings.IndexByte(q[j:], end)
				if k < 0 {
					return fmt.Errorf("%w: unterminated %c", ErrNotReadOnly, c)
				}
				j += k + 1
				if end != ']' && j < len(q) && q[j] == end { // doubled: an escaped quote
					j++
					continue
				}
				break
			}
			if ended {
				return fmt.Errorf("%w: more than one statement", ErrNotReadOnly)
			}
			i = j
		case c == ';':
			ended = true
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i
			for j < len(q) && (q[j] == '_' || q[j] == '$' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= 'A' && q[j] <= 'Z' || q[j] >= '0' && q[j] <= '9' || q[j] >= 0x80) {
				j++
			}
			if ended {
				return fmt.Errorf("%w: more than one statement", ErrNotReadOnly)
			}
			words = append(words, strings.ToUpper(q[i:j]))
			i = j
		default:
			if ended {
				return fmt.Errorf("%w: more than one statement", ErrNotReadOnly)
			}
			i++
		}
	}
	if len(words) == 0 || words[0] != "SELECT" && words[0] != "WITH" {
		return fmt.Errorf("%w: it does not start with SELECT or WITH", ErrNotReadOnly)
	}
	for k, w := range words {
		if forbidden[w] {
			return fmt.Errorf("%w: it holds %s", ErrNotReadOnly, w)
		}
		if w == "REPLACE" && k+1 < len(words) && words[k+1] == "INTO" {
			return fmt.Errorf("%w: it holds REPLACE INTO", ErrNotReadOnly)
		}
	}
	return nil
}
