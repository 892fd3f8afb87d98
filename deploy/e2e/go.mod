module github.com/openload/openload/deploy/e2e

go 1.26.0
