// Package archmap holds the test that keeps docs/ARCHITECTURE.md's package table true: every
// package `go list ./...` reports has a row, and every row names a package that exists.
package archmap
