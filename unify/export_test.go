package unify

// TestHookRename lets the external tests interrupt Definitions.
var TestHookRename = &testHookRename
