package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
)

// maxRelatedFile bounds the JSON file handed with a related database's
// rows (abi.SQLiteRelated.File).
const maxRelatedFile = 64 << 10

// relatedRows reads the related databases of a SQLite store's database
// at path (abi.SQLiteSource.Related: Cursor's workspaces), each
// read-only as the store's database is, and returns their Row lines by
// the key of the session each is about, in the order of the declared
// sets and of the databases' paths. A glob may name the store's
// database itself (an older Cursor's workspace database, for the
// workspace.json beside it). A database that cannot be read is a
// problem, and the others are read.
func relatedRows(ctx context.Context, path string, src *abi.SQLiteSource) (map[string][]byte, []string) {
	out := map[string][]byte{}
	var problems []string
	for _, r := range src.Related {
		up, glob := abi.SubAgentsGlob(r.Glob)
		dir := filepath.Dir(path)
		for range up {
			dir = filepath.Dir(dir)
		}
		matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(glob)))
		if err != nil {
			problems = append(problems, fmt.Sprintf("related %q: %v", r.Glob, err))
			continue
		}
		sort.Strings(matches)
		for _, m := range matches {
			if ctx.Err() != nil {
				return out, append(problems, ctx.Err().Error())
			}
			if st, err := os.Stat(m); err != nil || !st.Mode().IsRegular() {
				continue
			}
			if err := relatedOf(ctx, m, r, out); err != nil {
				problems = append(problems, fmt.Sprintf("related database %s: %v", m, err))
			}
		}
	}
	return out, problems
}

// relatedOf runs r's query on the database at path and adds its rows to
// out by session key, each with r.File's document beside the database
// as its column "file".
func relatedOf(ctx context.Context, path string, r abi.SQLiteRelated, out map[string][]byte) error {
	db, err := openSQLite(ctx, path, &abi.SQLiteSource{Sessions: r.Query})
	if err != nil {
		return err
	}
	defer db.Close()
	file := []byte("null")
	if r.File != "" {
		if b, err := regfile.ReadFile(filepath.Join(filepath.Dir(path), r.File), maxRelatedFile); err == nil && json.Valid(b) {
			var c bytes.Buffer
			if json.Compact(&c, b) == nil {
				file = c.Bytes()
			}
		}
	}
	rows, err := db.tx.QueryContext(ctx, r.Query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	ki := slices.Index(cols, r.Key)
	if ki < 0 {
		return fmt.Errorf("its columns %v lack key %q", cols, r.Key)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	table, _ := json.Marshal(r.Table)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		key, ok := keyString(vals[ki])
		if !ok || key == "" {
			continue
		}
		kb, _ := json.Marshal(key)
		l := out[key]
		l = append(l, `{"$twasm":"`+abi.RowType+`","table":`...)
		l = append(l, table...)
		l = append(l, `,"key":`...)
		l = append(l, kb...)
		l = append(l, `,"version":0,"row":{`...)
		for i, c := range cols {
			cb, _ := json.Marshal(c)
			l = append(append(l, cb...), ':')
			l = appendValue(l, vals[i], false)
			l = append(l, ',')
		}
		l = append(l, `"file":`...)
		l = append(l, file...)
		out[key] = append(l, "}}\n"...)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return db.verify()
}
