package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/sqlguard"
	_ "modernc.org/sqlite" // pure-Go SQLite: twasm stays one static binary
)

// ErrDatabaseChanged is returned when a database read without locks (an
// agent's database with no write-ahead log: nobody had it open) changed
// while it was read: what was read may be torn, and is not archived.
var ErrDatabaseChanged = errors.New("the database changed while it was read without locks")

// ErrDatabaseWritten is returned when an agent's database in rollback
// journal mode is being written (its journal in use): it is not read
// then, since a reader would hold a lock the agent's commit waits for.
var ErrDatabaseWritten = errors.New("the agent is writing the database")

// dbState is what says whether a database file changed: its size, mtime
// and header (which holds SQLite's change counter), whether a write-ahead
// log (or its -shm index) is beside it, and whether its rollback journal
// is in use (journalInUse).
type dbState struct {
	size, mtime       int64
	header            [100]byte
	wal, journal, shm bool
}

// journalMagic starts the header of a rollback journal that holds pages
// to roll back: SQLite writes it when a write transaction first changes a
// page, and removes the journal (journal_mode DELETE), truncates it
// (TRUNCATE) or zeroes its header (PERSIST) when the transaction ends.
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// journalInUse reports whether path's rollback journal holds a write in
// progress (or one a crash left to roll back): it is there, and its
// header starts with journalMagic. A journal a TRUNCATE or PERSIST mode
// agent keeps between writes (empty, or its header zeroed) is not in use.
func journalInUse(path string) bool {
	f, err := os.Open(path + "-journal")
	if err != nil {
		return false
	}
	defer f.Close()
	var h [8]byte
	_, err = io.ReadFull(f, h[:])
	return err == nil && bytes.Equal(h[:], journalMagic)
}

func stateOf(path string) (dbState, error) {
	var s dbState
	f, err := os.Open(path) // read-only; never created
	if err != nil {
		return s, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return s, err
	}
	if !st.Mode().IsRegular() {
		return s, fmt.Errorf("%s: not a regular file", path)
	}
	s.size, s.mtime = st.Size(), st.ModTime().UnixNano()
	if _, err := io.ReadFull(f, s.header[:]); err != nil && s.size > 0 {
		return s, fmt.Errorf("%s: read header: %w", path, err)
	}
	_, err = os.Stat(path + "-wal")
	s.wal = err == nil
	s.journal = journalInUse(path)
	_, err = os.Stat(path + "-shm")
	s.shm = err == nil
	return s, nil
}

// sqliteDB is one read-only snapshot of an agent's SQLite database: one
// connection, one read transaction.
//
// How it is opened decides what twasm does to the agent's files and to
// the agent. A read-only connection (mode=ro) to a database in WAL mode
// creates the -wal and -shm files when they are not there, and leaves
// them; to one in rollback-journal mode it takes a shared lock that an
// agent's commit waits for (and fails on, past its busy timeout). So
// when the agent has no log (it is not running: SQLite removes the log
// when the last connection closes; or it uses a rollback journal), the
// database is opened immutable (no lock, no file created), and the file
// is checked after every read (size, mtime, header with its change
// counter, no log appeared, no journal in use): a database that changed
// meanwhile is read again next time, never archived torn
// (ErrDatabaseChanged). A rollback journal in use (journalInUse: a write
// in progress) means the file may hold half a commit: it is not read at
// all (ErrDatabaseWritten). When the agent has its log, the connection
// is mode=ro: a WAL reader takes no lock a writer waits for, and the
// agent's files are the agent's. In both, query_only is on and the
// queries were checked (sqlguard).
type sqliteDB struct {
	path      string
	db        *sql.DB
	conn      *sql.Conn
	tx        *sql.Tx
	immutable bool
	before    dbState

	userVersion, schemaVersion int64
	querySum                   string
	// afterRead, when set (tests), runs after each session's rows are
	// read, inside the read transaction.
	afterRead func()
}

// sqliteURI is the connection string of a read-only connection to path.
func sqliteURI(path string, immutable bool) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	q := "file:" + esc + "?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(2000)"
	if immutable {
		q += "&immutable=1"
	}
	return q
}

// openSQLite opens path read-only and begins its read transaction.
func openSQLite(ctx context.Context, path string, src *abi.SQLiteSource) (*sqliteDB, error) {
	if err := checkQueries(src); err != nil {
		return nil, err
	}
	st, err := stateOf(path)
	if err != nil {
		return nil, err
	}
	if st.journal && !st.wal {
		// A rollback-journal database being written: a reader would
		// take a lock the agent's commit waits for, and reading without
		// locks now may see half a commit.
		return nil, fmt.Errorf("%w: its rollback journal is in use (a write in progress, or one a crash left to roll back)", ErrDatabaseWritten)
	}
	d := &sqliteDB{path: path, before: st, immutable: !st.wal && !st.shm, querySum: querySum(src)}
	d.db, err = sql.Open("sqlite", sqliteURI(path, d.immutable))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	d.db.SetMaxOpenConns(1)
	if d.conn, err = d.db.Conn(ctx); err != nil {
		d.db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if d.tx, err = d.conn.BeginTx(ctx, nil); err != nil {
		d.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for _, p := range []struct {
		name string
		v    *int64
	}{{"user_version", &d.userVersion}, {"schema_version", &d.schemaVersion}} {
		if err := d.tx.QueryRowContext(ctx, "PRAGMA "+p.name).Scan(p.v); err != nil {
			d.Close()
			return nil, fmt.Errorf("%s: %s: %w", path, p.name, err)
		}
	}
	return d, nil
}

// checkQueries checks the declared queries again (the manifest check is
// the host's; this package runs them).
func checkQueries(src *abi.SQLiteSource) error {
	if src == nil {
		return errors.New("no sqlite queries declared")
	}
	if err := sqlguard.Check(src.Sessions); err != nil {
		return fmt.Errorf("sessions query: %w", err)
	}
	if src.Newer != nil {
		if err := sqlguard.Check(src.Newer.Sessions); err != nil {
			return fmt.Errorf("newer sessions query: %w", err)
		}
	}
	for i, sc := range src.Schemas {
		if err := sqlguard.Check(sc.Sessions); err != nil {
			return fmt.Errorf("schema %d: sessions query: %w", i+1, err)
		}
	}
	for i, t := range src.Tables {
		if err := sqlguard.Check(t.Query); err != nil {
			return fmt.Errorf("row query %d: %w", i+1, err)
		}
	}
	return nil
}

// querySum is the sha256 of the declared queries, as the facts line
// states it.
func querySum(src *abi.SQLiteSource) string {
	b, _ := json.Marshal(src)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Close ends the read transaction and closes the connection.
func (d *sqliteDB) Close() error {
	var errs []error
	if d.tx != nil {
		errs = append(errs, d.tx.Rollback())
	}
	if d.conn != nil {
		errs = append(errs, d.conn.Close())
	}
	errs = append(errs, d.db.Close())
	return errors.Join(errs...)
}

// verify reports ErrDatabaseChanged when the database was read without
// locks and changed since it was opened.
func (d *sqliteDB) verify() error {
	if !d.immutable {
		return nil
	}
	st, err := stateOf(d.path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDatabaseChanged, err)
	}
	if st.size != d.before.size || st.mtime != d.before.mtime || st.header != d.before.header || st.wal || st.journal || st.shm {
		return ErrDatabaseChanged
	}
	return nil
}

// dbSession is one session a store lists: its key and cursor.
type dbSession struct {
	Key    string
	Cursor int64
	// Parent is the session this one is a sub-agent of ("" none).
	Parent string
}

// hasTable reports whether the database has table name (a schema's
// newer table, abi.SQLiteNewer and abi.SQLiteTable.IfTable).
func (d *sqliteDB) hasTable(ctx context.Context, name string) (bool, error) {
	var n int
	err := d.tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("%s: table %s: %w", d.path, name, err)
	}
	return n > 0, nil
}

// sessionsQuery is the sessions query for this database: that of the
// first schema whose tables it all has (abi.SQLiteSource.Schemas, then
// Newer, a schema of one table), else Sessions.
func (d *sqliteDB) sessionsQuery(ctx context.Context, src *abi.SQLiteSource) (string, error) {
	schemas := src.Schemas
	if nw := src.Newer; nw != nil {
		schemas = append(slices.Clip(schemas), abi.SQLiteSchema{Tables: []string{nw.Table}, Sessions: nw.Sessions})
	}
	for _, sc := range schemas {
		all := len(sc.Tables) > 0
		for _, name := range sc.Tables {
			ok, err := d.hasTable(ctx, name)
			if err != nil {
				return "", err
			}
			if !ok {
				all = false
				break
			}
		}
		if all {
			return sc.Sessions, nil
		}
	}
	return src.Sessions, nil
}

// sessions runs the sessions query (sessionsQuery).
func (d *sqliteDB) sessions(ctx context.Context, src *abi.SQLiteSource) ([]dbSession, error) {
	query, err := d.sessionsQuery(ctx, src)
	if err != nil {
		return nil, err
	}
	rows, err := d.tx.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sessions query: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	ki, ci, pi := slices.Index(cols, "key"), slices.Index(cols, "cursor"), slices.Index(cols, "parent")
	if ki < 0 || ci < 0 {
		return nil, fmt.Errorf("sessions query: its columns are %v: it needs key and cursor", cols)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []dbSession
	seen := map[string]bool{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("sessions query: %w", err)
		}
		key, ok := keyString(vals[ki])
		if !ok || key == "" || seen[key] {
			continue
		}
		seen[key] = true
		cur, _ := intOf(vals[ci])
		ds := dbSession{Key: key, Cursor: cur}
		if pi >= 0 {
			ds.Parent, _ = keyString(vals[pi])
		}
		out = append(out, ds)
	}
	return out, rows.Err()
}

// rowsOf runs the row queries of one session for rows changed at or
// after since, and returns them as Row lines (abi.Row), with the
// earliest and latest row time (zero when no query declares one).
func (d *sqliteDB) rowsOf(ctx context.Context, src *abi.SQLiteSource, key string, since int64) (lines []byte, n int, first, last time.Time, err error) {
	for _, t := range src.Tables {
		if t.IfTable != "" {
			ok, err := d.hasTable(ctx, t.IfTable)
			if err != nil {
				return nil, 0, first, last, err
			}
			if !ok {
				continue // a schema older than the query's
			}
		}
		var args []any
		if strings.Contains(t.Query, ":session") {
			args = append(args, sql.Named("session", key))
		}
		if strings.Contains(t.Query, ":since") {
			args = append(args, sql.Named("since", since))
		}
		rows, err := d.tx.QueryContext(ctx, t.Query, args...)
		if err != nil {
			return nil, 0, first, last, fmt.Errorf("row query %q: %w", t.Table, err)
		}
		lines, n, first, last, err = appendRows(lines, n, first, last, rows, t)
		rows.Close()
		if err != nil {
			return nil, 0, first, last, fmt.Errorf("row query %q: %w", t.Table, err)
		}
	}
	if d.afterRead != nil {
		d.afterRead()
	}
	return lines, n, first, last, d.verify()
}

func appendRows(lines []byte, n int, first, last time.Time, rows *sql.Rows, t abi.SQLiteTable) ([]byte, int, time.Time, time.Time, error) {
	cols, err := rows.Columns()
	if err != nil {
		return lines, n, first, last, err
	}
	ki, vi, ti := slices.Index(cols, t.Key), slices.Index(cols, t.Version), slices.Index(cols, t.Time)
	if ki < 0 || vi < 0 {
		return lines, n, first, last, fmt.Errorf("its columns %v lack key %q or version %q", cols, t.Key, t.Version)
	}
	isJSON := make([]bool, len(cols))
	for i, c := range cols {
		isJSON[i] = slices.Contains(t.JSON, c)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	table, _ := json.Marshal(t.Table)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return lines, n, first, last, err
		}
		key, _ := keyString(vals[ki])
		kb, _ := json.Marshal(key)
		ver, _ := intOf(vals[vi])
		lines = append(lines, `{"$twasm":"`+abi.RowType+`","table":`...)
		lines = append(lines, table...)
		lines = append(lines, `,"key":`...)
		lines = append(lines, kb...)
		lines = append(lines, `,"version":`...)
		lines = strconv.AppendInt(lines, ver, 10)
		lines = append(lines, `,"row":{`...)
		for i, c := range cols {
			if i > 0 {
				lines = append(lines, ',')
			}
			cb, _ := json.Marshal(c)
			lines = append(lines, cb...)
			lines = append(lines, ':')
			lines = appendValue(lines, vals[i], isJSON[i])
		}
		lines = append(lines, "}}\n"...)
		n++
		if ti >= 0 {
			if ms, ok := intOf(vals[ti]); ok && ms > 0 {
				tm := time.UnixMilli(ms).UTC()
				if first.IsZero() || tm.Before(first) {
					first = tm
				}
				if tm.After(last) {
					last = tm
				}
			}
		}
	}
	return lines, n, first, last, rows.Err()
}

// appendValue appends a column's value as JSON: a JSON column's text
// inlined (compacted onto one line) when it parses.
func appendValue(b []byte, v any, isJSON bool) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		if isJSON && json.Valid([]byte(x)) {
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(x)) == nil {
				return append(b, buf.Bytes()...)
			}
		}
		s, _ := json.Marshal(x)
		return append(b, s...)
	case []byte:
		if isJSON && json.Valid(x) {
			var buf bytes.Buffer
			if json.Compact(&buf, x) == nil {
				return append(b, buf.Bytes()...)
			}
		}
		s, _ := json.Marshal(base64.StdEncoding.EncodeToString(x))
		return append(b, s...)
	case time.Time:
		s, _ := json.Marshal(x.UTC().Format(time.RFC3339Nano))
		return append(b, s...)
	default:
		s, _ := json.Marshal(fmt.Sprint(x))
		return append(b, s...)
	}
}

func keyString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	return "", false
}

func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	case []byte:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case time.Time:
		return x.UnixMilli(), true
	}
	return 0, false
}
