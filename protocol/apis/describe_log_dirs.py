"""DescribeLogDirs (35): which log directories a broker has and what each partition's log
weighs in them."""

from ..schema import Api, array, f, request, response, struct

DescribeLogDirsRequest = request(
    "DescribeLogDirsRequest", 35, "1-5", "2+",
    f("topics", array(struct(
        "DescribableLogDirTopic",
        f("topic", "string"),
        f("partitions", array("int32")),
    )), nullable="0+"),  # null: every topic
)

DescribeLogDirsResponse = response(
    "DescribeLogDirsResponse", 35, "1-5", "2+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16", "3+"),
    f("results", array(struct(
        "DescribeLogDirsResult",
        f("error_code", "int16"),
        f("log_dir", "string"),
        f("topics", array(struct(
            "DescribeLogDirsTopic",
            f("name", "string"),
            f("partitions", array(struct(
                "DescribeLogDirsPartition",
                f("partition_index", "int32"),
                f("partition_size", "int64"),
                f("offset_lag", "int64"),
                f("is_future_key", "bool"),
            ))),
        ))),
        f("total_bytes", "int64", "4+", default=-1),
        f("usable_bytes", "int64", "4+", default=-1),
        f("is_cordoned", "bool", "5+", default=False),
    ))),
)

API = Api(35, "DescribeLogDirs", DescribeLogDirsRequest, DescribeLogDirsResponse)
