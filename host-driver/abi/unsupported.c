/*
 * host-driver/abi/unsupported.c — the exports snic does not implement
 * whose answer is not a constant (the constant ones are the table in
 * stubs.def): rdma-core 44's behaviour when the provider lacks the
 * operation, argument checks included.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include <infiniband/verbs.h>

/* From rdma-core's driver.h (not installed); opaque here. */
struct verbs_sysfs_dev;
struct ibv_command_buffer;

extern bool verbs_allow_disassociate_destroy;
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
				     struct ibv_command_buffer *link);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...);

/* Compat (non-default) ibv_register_driver@IBVERBS_1.1: the registration
 * entry point of pre-rdma-core providers.  Internal name, versioned
 * alias (the map cannot name a non-default version). */
typedef struct ibv_device *(*hd_old_driver_init_fn)(const char *uverbs_path,
						    int abi_version);
void hd_compat_ibv_register_driver(const char *name,
				   hd_old_driver_init_fn init_func);
__asm__(".symver hd_compat_ibv_register_driver,"
	"ibv_register_driver@IBVERBS_1.1");

void hd_compat_ibv_register_driver(const char *name,
				   hd_old_driver_init_fn init_func)
{
	/* An old-style provider; it is never given a device. */
	(void)name;
	(void)init_func;
}

/* Read by libmlx5 when destroying objects of a disassociated device
 * (a bool data object in .bss, as rdma-core's). */
bool verbs_allow_disassociate_destroy;

/* Sizes an ioctl attribute buffer; with no kernel ioctl path behind it the
 * count passed in is as good an answer as any. */
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
				     struct ibv_command_buffer *link)
{
	(void)link;
	return num_attrs;
}

/* rdma-core: -1 with errno EINVAL for a NULL device, else reads a file of
 * the device's sysfs directory.  snic devices have no verbs_sysfs_dev. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
{
	(void)buf;
	(void)size;
	(void)fnfmt;
	errno = sysfs_dev ? EOPNOTSUPP : EINVAL;
	return -1;
}
