// Package codesize keeps the repository's size rules as a test: no Go file over
// 600 lines, and no function over 100 lines outside tests and the bench/
// commands. A file or function past them is a room that has become hard to
// live in; split it by what it does (docs/ARCHITECTURE.md).
package codesize
