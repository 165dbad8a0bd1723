package sqlguard

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		q  string
		ok bool
	}{
		{"SELECT id AS key, time_updated AS cursor FROM session", true},
		{"select 1;", true},
		{"SELECT 1; -- done\n", true},
		{"WITH t AS (SELECT 1) SELECT * FROM t", true},
		{"SELECT replace(data, 'a', 'b') FROM part", true},
		{"SELECT 'DROP TABLE x; ATTACH' FROM t", true},
		{`SELECT "delete" FROM t`, true},
		{"SELECT 1 /* PRAGMA */", true},
		{"SELECT 'it''s' FROM t", true},
		{"SELECT 1; SELECT 2", false},
		{"SELECT 1; DROP TABLE t", false},
		{"SELECT 1;'x'", false},
		{"ATTACH DATABASE 'x' AS y", false},
		{"SELECT * FROM t; ATTACH 'x' AS y", false},
		{"PRAGMA journal_mode=DELETE", false},
		{"SELECT load_extension('x')", false},
		{"SELECT writefile('/tmp/x', data) FROM part", false},
		{"WITH x AS (SELECT 1) DELETE FROM t", false},
		{"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", false},
		{"WITH x AS (SELECT 1) REPLACE INTO t SELECT * FROM x", false},
		{"UPDATE t SET x = 1", false},
		{"VACUUM INTO '/tmp/x'", false},
		{"SELECT 1 /* open", false},
		{"SELECT 'open", false},
		{"", false},
		{"-- only a comment", false},
		{"BEGIN IMMEDIATE", false},
	} {
		err := Check(c.q)
		if (err == nil) != c.ok {
			t.Errorf("Check(%q) = %v, want ok %v", c.q, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrNotReadOnly) {
			t.Errorf("Check(%q) = %v: not ErrNotReadOnly", c.q, err)
		}
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("SELECT 1")
	f.Add("SELECT 'a''b' FROM t; ")
	f.Fuzz(func(t *testing.T, q string) {
		_ = Check(q) // never panics, never hangs
	})
}
