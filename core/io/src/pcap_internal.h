/* Private libpcap helpers of the io layer (pcap_file.c), shared with captures (capture.c). */
#ifndef QREPLAY_PCAP_INTERNAL_H
#define QREPLAY_PCAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* The next record of an offline libpcap handle (pcap_t *) as a time in ns: QR_OK; QR_END at the
 * end, also when the file ends inside its last record (then warning says where); QR_EFORMAT for
 * a corrupt record, QR_EVALUE for a timestamp outside [0, 2^62] ns, "PATH: packet N: ..." in
 * errbuf (count: packets read before). *offset: the byte offset of the next record, kept up to
 * date (start with qri_pcap_first_offset; 0 means not known, as in pcapng). pcap_file.c. */
struct pcap;
struct pcap_pkthdr;
uint64_t qri_pcap_first_offset(struct pcap *pc);
/* Open a capture file for reading at nanosecond precision: QR_ENOENT, QR_EFORMAT (a folder, not a
 * readable FORMATS file), QR_ETRUNC (empty, cut header), "PATH: ..." in errbuf. kind names what the
 * file should be ("pcap file", "capture"). */
int qri_pcap_open(const char *path, const char *kind, const char *formats, struct pcap **out,
                  char *errbuf);
int qri_pcap_next(struct pcap *pc, const char *path, uint64_t count, uint64_t *offset,
                  struct pcap_pkthdr **h, const unsigned char **data, int64_t *time_ns,
                  char *warning, size_t warning_size, char *errbuf);

#endif
