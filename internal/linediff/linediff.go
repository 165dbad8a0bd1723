package linediff

// Kind is what an Op does.
type Kind int

// Edit kinds.
const (
	Equal Kind = iota // a line of both
	Del               // a line only in a
	Add               // a line only in b
)

// Op is one edit: A indexes a (Equal, Del), B indexes b (Equal, Add).
type Op struct {
	Kind Kind
	A, B int
}

// MaxCells bounds the LCS table (len(a)+1)*(len(b)+1); Ops returns ok
// false above it, so that a caller can fall back to something cheaper.
const MaxCells = 4 << 20

// Ops returns the edit script turning a into b, deletions before the
// additions they replace.
func Ops(a, b []string) (ops []Op, ok bool) {
	n, m := len(a), len(b)
	if (n+1)*(m+1) > MaxCells {
		return nil, false
	}
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				lcs[i][j] = lcs[i+1][j+1] + 1
			case lcs[i+1][j] >= lcs[i][j+1]:
				lcs[i][j] = lcs[i+1][j]
			default:
				lcs[i][j] = lcs[i][j+1]
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, Op{Equal, i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, Op{Kind: Del, A: i, B: j})
			i++
		default:
			ops = append(ops, Op{Kind: Add, A: i, B: j})
			j++
		}
	}
	return ops, true
}
