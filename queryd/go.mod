module github.com/strata-kb/strata/queryd

go 1.26.8
