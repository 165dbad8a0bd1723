// Package jsonstr is the JSON string and value codec of the transcript
// format: string literals written losslessly for every byte string (an
// invalid UTF-8 byte as a lone \udc80..\udcff escape, read back as the
// same byte), their inverse, and compaction of embedded JSON values. The
// transcript encoder and decoder, the recorder, the redactor and the
// normalizer share it. It imports only the standard library.
package jsonstr
