package odt

import "encoding/xml"

// The ODF elements the reader acts on, by namespace and local name (the
// prefixes a file uses are its own choice).
var (
	officeBody          = xml.Name{Space: nsOffice, Local: "body"}
	officeText          = xml.Name{Space: nsOffice, Local: "text"}
	officeMeta          = xml.Name{Space: nsOffice, Local: "meta"}
	officeStyles        = xml.Name{Space: nsOffice, Local: "styles"}
	officeAutoStyles    = xml.Name{Space: nsOffice, Local: "automatic-styles"}
	officeMasterStyles  = xml.Name{Space: nsOffice, Local: "master-styles"}
	officeAnnotation    = xml.Name{Space: nsOffice, Local: "annotation"}
	officeBinaryData    = xml.Name{Space: nsOffice, Local: "binary-data"}
	officeFontFaceDecls = xml.Name{Space: nsOffice, Local: "font-face-decls"}
	officeScripts       = xml.Name{Space: nsOffice, Local: "scripts"}
	officeSettings      = xml.Name{Space: nsOffice, Local: "settings"}
	officeForms         = xml.Name{Space: nsOffice, Local: "forms"}
	styleStyle          = xml.Name{Space: nsStyle, Local: "style"}
	styleParagraphProps = xml.Name{Space: nsStyle, Local: "paragraph-properties"}
	styleTableProps     = xml.Name{Space: nsStyle, Local: "table-properties"}
	styleHeader         = xml.Name{Space: nsStyle, Local: "header"}
	styleHeaderLeft     = xml.Name{Space: nsStyle, Local: "header-left"}
	styleHeaderFirst    = xml.Name{Space: nsStyle, Local: "header-first"}
	styleFooter         = xml.Name{Space: nsStyle, Local: "footer"}
	styleFooterLeft     = xml.Name{Space: nsStyle, Local: "footer-left"}
	styleFooterFirst    = xml.Name{Space: nsStyle, Local: "footer-first"}
	textP               = xml.Name{Space: nsText, Local: "p"}
	textH               = xml.Name{Space: nsText, Local: "h"}
	textList            = xml.Name{Space: nsText, Local: "list"}
	textListItem        = xml.Name{Space: nsText, Local: "list-item"}
	textListHeader      = xml.Name{Space: nsText, Local: "list-header"}
	textListStyle       = xml.Name{Space: nsText, Local: "list-style"}
	textListLevelNumber = xml.Name{Space: nsText, Local: "list-level-style-number"}
	textListLevelBullet = xml.Name{Space: nsText, Local: "list-level-style-bullet"}
	textListLevelImage  = xml.Name{Space: nsText, Local: "list-level-style-image"}
	textNumber          = xml.Name{Space: nsText, Local: "number"}
	textS               = xml.Name{Space: nsText, Local: "s"}
	textTab             = xml.Name{Space: nsText, Local: "tab"}
	textLineBreak       = xml.Name{Space: nsText, Local: "line-break"}
	textSoftPageBreak   = xml.Name{Space: nsText, Local: "soft-page-break"}
	textSection         = xml.Name{Space: nsText, Local: "section"}
	textNote            = xml.Name{Space: nsText, Local: "note"}
	textNoteCitation    = xml.Name{Space: nsText, Local: "note-citation"}
	textNoteBody        = xml.Name{Space: nsText, Local: "note-body"}
	textTrackedChanges  = xml.Name{Space: nsText, Local: "tracked-changes"}
	textSequenceDecls   = xml.Name{Space: nsText, Local: "sequence-decls"}
	textVariableDecls   = xml.Name{Space: nsText, Local: "variable-decls"}
	textUserFieldDecls  = xml.Name{Space: nsText, Local: "user-field-decls"}
	textDDEDecls        = xml.Name{Space: nsText, Local: "dde-connection-decls"}
	textTableOfContent  = xml.Name{Space: nsText, Local: "table-of-content"}
	textIllustrationIdx = xml.Name{Space: nsText, Local: "illustration-index"}
	textTableIndex      = xml.Name{Space: nsText, Local: "table-index"}
	textObjectIndex     = xml.Name{Space: nsText, Local: "object-index"}
	textPageNumber      = xml.Name{Space: nsText, Local: "page-number"}
	textPageCount       = xml.Name{Space: nsText, Local: "page-count"}
	tableTable          = xml.Name{Space: nsTable, Local: "table"}
	tableRow            = xml.Name{Space: nsTable, Local: "table-row"}
	tableCell           = xml.Name{Space: nsTable, Local: "table-cell"}
	tableCoveredCell    = xml.Name{Space: nsTable, Local: "covered-table-cell"}
	drawFrame           = xml.Name{Space: nsDraw, Local: "frame"}
	drawImage           = xml.Name{Space: nsDraw, Local: "image"}
	drawObject          = xml.Name{Space: nsDraw, Local: "object"}
	drawObjectOLE       = xml.Name{Space: nsDraw, Local: "object-ole"}
	svgTitle            = xml.Name{Space: nsSVG, Local: "title"}
	svgDesc             = xml.Name{Space: nsSVG, Local: "desc"}
	dcCreator           = xml.Name{Space: nsDC, Local: "creator"}
	dcDate              = xml.Name{Space: nsDC, Local: "date"}
	metaDateString      = xml.Name{Space: nsMeta, Local: "date-string"}
)
