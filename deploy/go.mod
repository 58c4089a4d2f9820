module github.com/strata-kb/strata/deploy

go 1.26.8
