module github.com/twasm/twasm

go 1.26.8
