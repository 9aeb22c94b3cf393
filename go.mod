module scout

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/sbromberger/gompi v0.2.0 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
)
