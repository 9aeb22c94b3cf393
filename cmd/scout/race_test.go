//go:build race

package main

// raceEnabled tells tests that the race detector slows everything down.
const raceEnabled = true
