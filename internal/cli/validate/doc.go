// Package validate implements "twasm validate".
package validate
