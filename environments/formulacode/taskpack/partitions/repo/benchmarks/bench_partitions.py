from partitions import count_partitions, partition_table


class Count:
    params = [[30, 36]]
    param_names = ["n"]

    def time_count(self, n):
        return count_partitions(n)


class Table:
    params = [[25, 30]]
    param_names = ["m"]

    def time_table(self, m):
        return partition_table(m)
