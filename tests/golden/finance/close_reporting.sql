-- ledgerflow 0.1.0: project close_reporting (id 0b000000-0000-4000-8000-000000000103, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_close_consolidated <- dataset close_consolidated (period, latest active version)

-- lf_stage_1: operations input, 1; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `region`,
    `account_type`,
    `total_reporting`,
    `line_count`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_close_consolidated`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_update` AS (
  SELECT
    `region`,
    `account_type`,
    `total_reporting`,
    `line_count`,
    `_row_id`,
    `_deleted`,
    CASE WHEN NOT `_deleted` THEN :run_started_at ELSE `_updated_at` END AS `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    CASE WHEN NOT `_deleted` THEN CONCAT(`region`, ' ', UPPER(`account_type`)) END AS `report_line`,
    `_lf_origin`,
    `_lf_deleted_by`
  FROM `input`
)
SELECT
  *
FROM `op_001_update`;

-- output_002: operation 2 'Write the report' writes table close_report
SELECT
  `report_line`,
  `region`,
  `account_type`,
  `total_reporting`,
  `line_count`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

