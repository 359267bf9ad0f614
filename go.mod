module heat

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/klauspost/compress v1.20.4
	github.com/spf13/pflag v1.1.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/image v0.45.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
