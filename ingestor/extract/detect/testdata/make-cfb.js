// Writes an OLE compound file as Office stores a password-protected document:
// EncryptionInfo and EncryptedPackage streams (their contents here are filler).
const CFB = require('cfb');
const fs = require('fs');
const cfb = CFB.utils.cfb_new();
CFB.utils.cfb_add(cfb, '/EncryptionInfo', Buffer.from([4,0,4,0,0x40,0,0,0]));
CFB.utils.cfb_add(cfb, '/EncryptedPackage', Buffer.alloc(4096, 0x5a));
fs.writeFileSync(process.argv[2], CFB.write(cfb, {type: 'buffer'}));
const plain = CFB.utils.cfb_new();
CFB.utils.cfb_add(plain, '/WordDocument', Buffer.alloc(4096, 0x41));
fs.writeFileSync(process.argv[3], CFB.write(plain, {type: 'buffer'}));
