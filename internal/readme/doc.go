// Package readme holds the tests of README.md and docs/: that README's
// set-up command and quick start run as written, that README stays short enough to read
// (under 250 lines, no table cell over 300 characters), and that every
// link between the documents leads somewhere. It has no code of its own.
package readme
